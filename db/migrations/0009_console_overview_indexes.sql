CREATE INDEX `payout_transitions_to_at` ON `payout_transitions` (`to_status`,`at`);--> statement-breakpoint
CREATE INDEX `payouts_updated` ON `payouts` (`updated_at`);