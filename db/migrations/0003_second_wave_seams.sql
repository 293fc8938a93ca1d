CREATE TABLE `rail_batch_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`rail` text NOT NULL,
	`batch_id` text,
	`payout_id` text NOT NULL,
	`reference` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`status` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`batch_id`) REFERENCES `rail_batches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `rail_batch_entries_reference` ON `rail_batch_entries` (`reference`);--> statement-breakpoint
CREATE INDEX `rail_batch_entries_queue` ON `rail_batch_entries` (`company_id`,`rail`,`batch_id`);--> statement-breakpoint
CREATE INDEX `rail_batch_entries_batch` ON `rail_batch_entries` (`batch_id`);--> statement-breakpoint
CREATE TABLE `rail_batches` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`rail` text NOT NULL,
	`status` text NOT NULL,
	`entry_count` integer NOT NULL,
	`total_cents` integer NOT NULL,
	`cutoff_at` integer NOT NULL,
	`rail_reference` text,
	`transmitted_at` integer,
	`error` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `rail_batches_company_status` ON `rail_batches` (`company_id`,`status`);--> statement-breakpoint
CREATE TABLE `sandbox_rail_submissions` (
	`reference` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`payout_id` text NOT NULL,
	`modality` text NOT NULL,
	`answer` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
ALTER TABLE `disbursements` ADD `released_by_funding_id` text;--> statement-breakpoint
ALTER TABLE `disbursements` ADD `released_at` integer;--> statement-breakpoint
ALTER TABLE `fundings` ADD `disbursement_id` text;--> statement-breakpoint
ALTER TABLE `payouts` ADD `submission_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `scheduled_jobs` ADD `attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `scheduled_jobs` ADD `lease_until` integer;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `failing_since` integer;