CREATE TABLE `check_mail_events` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`check_id` text NOT NULL,
	`payout_id` text NOT NULL,
	`lob_check_id` text NOT NULL,
	`type` text NOT NULL,
	`at` integer NOT NULL,
	`received_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `check_mail_events_check` ON `check_mail_events` (`check_id`,`at`);--> statement-breakpoint
CREATE TABLE `lob_settings` (
	`company_id` text PRIMARY KEY NOT NULL,
	`settings_sealed` text NOT NULL,
	`fingerprint` text NOT NULL,
	`provider_mails` integer DEFAULT 1 NOT NULL,
	`updated_by` text,
	`updated_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
