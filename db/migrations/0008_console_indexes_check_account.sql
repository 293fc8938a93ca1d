ALTER TABLE `bank_settings` ADD `has_check_account` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `disbursements_claim` ON `disbursements` (`claim_id`);--> statement-breakpoint
CREATE INDEX `events_payout` ON `events` (`payout_id`);--> statement-breakpoint
CREATE INDEX `ledger_transactions_payout` ON `ledger_transactions` (`payout_id`);--> statement-breakpoint
CREATE INDEX `notifications_payout` ON `notifications` (`payout_id`);--> statement-breakpoint
CREATE INDEX `payouts_created` ON `payouts` (`created_at`,`id`);