ALTER TABLE `payouts` ADD `last_failed_at` integer;--> statement-breakpoint
ALTER TABLE `payouts` ADD `last_failure_method_id` integer;--> statement-breakpoint
ALTER TABLE `payouts` ADD `last_failure_last_four` text;--> statement-breakpoint
UPDATE `payouts` SET
  `last_failed_at` = (SELECT max(t.`at`) FROM `payout_transitions` t
    WHERE t.`payout_id` = `payouts`.`id` AND t.`to_status` = 'failed'),
  `last_failure_method_id` = CASE WHEN `status` = 'failed' THEN `payment_method_id` END,
  `last_failure_last_four` = CASE WHEN `status` = 'failed' THEN `method_last_four` END
WHERE `failure_reason` IS NOT NULL;
