CREATE TABLE `notification_resends` (
	`id` text PRIMARY KEY NOT NULL,
	`payout_id` text NOT NULL,
	`requested_at` integer NOT NULL,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `notification_resends_payout` ON `notification_resends` (`payout_id`,`requested_at`);--> statement-breakpoint
ALTER TABLE `notifications` ADD `payout_id` text REFERENCES payouts(id);