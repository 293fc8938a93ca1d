CREATE TABLE `increase_notices` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`category` text NOT NULL,
	`object_id` text NOT NULL,
	`received_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `increase_settings` (
	`company_id` text PRIMARY KEY NOT NULL,
	`settings_sealed` text NOT NULL,
	`fingerprint` text NOT NULL,
	`updated_by` text,
	`updated_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `instant_transfers` (
	`reference` text PRIMARY KEY NOT NULL,
	`payout_id` text NOT NULL,
	`company_id` text NOT NULL,
	`card_token_id` text NOT NULL,
	`validation_id` text NOT NULL,
	`transfer_id` text NOT NULL,
	`route` text NOT NULL,
	`status` text NOT NULL,
	`checks` integer DEFAULT 0 NOT NULL,
	`checked_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `instant_transfers_transfer` ON `instant_transfers` (`transfer_id`);