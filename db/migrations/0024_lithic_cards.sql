CREATE TABLE `lithic_notices` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`event_type` text NOT NULL,
	`card_token` text NOT NULL,
	`received_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `lithic_settings` (
	`company_id` text PRIMARY KEY NOT NULL,
	`settings_sealed` text NOT NULL,
	`fingerprint` text NOT NULL,
	`updated_by` text,
	`updated_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `virtual_cards` (
	`reference` text PRIMARY KEY NOT NULL,
	`payout_id` text NOT NULL,
	`company_id` text NOT NULL,
	`card_token` text NOT NULL,
	`last_four` text NOT NULL,
	`spend_limit_cents` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`state` text NOT NULL,
	`spent_cents` integer,
	`reclaimed_cents` integer,
	`closed_at` integer,
	`checked_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `virtual_cards_card` ON `virtual_cards` (`card_token`);--> statement-breakpoint
CREATE INDEX `virtual_cards_payout` ON `virtual_cards` (`payout_id`);