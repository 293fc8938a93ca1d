CREATE TABLE `ach_corrections` (
	`company_id` text NOT NULL,
	`routing_number` text NOT NULL,
	`account_key` text NOT NULL,
	`change_code` text NOT NULL,
	`corrected_sealed` text NOT NULL,
	`import_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`company_id`, `routing_number`, `account_key`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`import_id`) REFERENCES `ach_imports`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `ach_files` (
	`batch_id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`immediate_origin` text NOT NULL,
	`immediate_destination` text NOT NULL,
	`bank_date` text NOT NULL,
	`file_id_modifier` text NOT NULL,
	`effective_date` text NOT NULL,
	`cutoff_kind` text NOT NULL,
	`window_ends_at` integer NOT NULL,
	`content_sealed` text NOT NULL,
	`sha256` text NOT NULL,
	`byte_size` integer NOT NULL,
	`entry_hash` text NOT NULL,
	`credit_total_cents` integer NOT NULL,
	`debit_total_cents` integer NOT NULL,
	`entry_count` integer NOT NULL,
	`file_name` text NOT NULL,
	`approval_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`batch_id`) REFERENCES `rail_batches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ach_files_modifier` ON `ach_files` (`immediate_origin`,`immediate_destination`,`bank_date`,`file_id_modifier`);--> statement-breakpoint
CREATE INDEX `ach_files_company_created` ON `ach_files` (`company_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `ach_imports` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text,
	`sha256` text NOT NULL,
	`source` text NOT NULL,
	`file_name` text NOT NULL,
	`return_count` integer NOT NULL,
	`correction_count` integer NOT NULL,
	`applied_count` integer NOT NULL,
	`report` text NOT NULL,
	`imported_by` text,
	`imported_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ach_imports_sha256_unique` ON `ach_imports` (`sha256`);--> statement-breakpoint
CREATE TABLE `ach_trace_sequences` (
	`odfi` text PRIMARY KEY NOT NULL,
	`next_sequence` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `bank_settings` (
	`company_id` text PRIMARY KEY NOT NULL,
	`settings_sealed` text NOT NULL,
	`fingerprint` text NOT NULL,
	`updated_by` text,
	`updated_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `sanctions_entries` (
	`list_id` text NOT NULL,
	`entry_number` integer NOT NULL,
	`name` text NOT NULL,
	`normalized_name` text NOT NULL,
	`sdn_type` text NOT NULL,
	`program` text NOT NULL,
	PRIMARY KEY(`list_id`, `entry_number`, `name`),
	FOREIGN KEY (`list_id`) REFERENCES `sanctions_lists`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `sanctions_lists` (
	`id` text PRIMARY KEY NOT NULL,
	`sha256` text NOT NULL,
	`entry_count` integer NOT NULL,
	`file_name` text NOT NULL,
	`loaded_by` text,
	`loaded_at` integer NOT NULL,
	`replaced_at` integer
);
--> statement-breakpoint
CREATE TABLE `sanctions_reviews` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`payout_id` text NOT NULL,
	`matches` text NOT NULL,
	`list_id` text NOT NULL,
	`status` text NOT NULL,
	`decided_by` text,
	`decided_at` integer,
	`reason` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `sanctions_reviews_payout` ON `sanctions_reviews` (`payout_id`);--> statement-breakpoint
CREATE INDEX `sanctions_reviews_status` ON `sanctions_reviews` (`status`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_rail_batch_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`rail` text NOT NULL,
	`batch_id` text,
	`payout_id` text,
	`funding_id` text,
	`direction` text DEFAULT 'credit' NOT NULL,
	`reference` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`status` text NOT NULL,
	`trace_number` text,
	`receiving_dfi` text,
	`account_last_four` text,
	`transaction_code` integer,
	`entry_class` text,
	`effective_date` text,
	`return_code` text,
	`settled_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`batch_id`) REFERENCES `rail_batches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`funding_id`) REFERENCES `fundings`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "rail_batch_entries_subject" CHECK(("payout_id" IS NULL) <> ("funding_id" IS NULL))
);
--> statement-breakpoint
INSERT INTO `__new_rail_batch_entries`("id", "company_id", "rail", "batch_id", "payout_id", "reference", "amount_cents", "status", "created_at") SELECT "id", "company_id", "rail", "batch_id", "payout_id", "reference", "amount_cents", "status", "created_at" FROM `rail_batch_entries`;--> statement-breakpoint
DROP TABLE `rail_batch_entries`;--> statement-breakpoint
ALTER TABLE `__new_rail_batch_entries` RENAME TO `rail_batch_entries`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `rail_batch_entries_reference` ON `rail_batch_entries` (`reference`);--> statement-breakpoint
CREATE UNIQUE INDEX `rail_batch_entries_trace` ON `rail_batch_entries` (`trace_number`);--> statement-breakpoint
CREATE INDEX `rail_batch_entries_queue` ON `rail_batch_entries` (`company_id`,`rail`,`batch_id`);--> statement-breakpoint
CREATE INDEX `rail_batch_entries_batch` ON `rail_batch_entries` (`batch_id`);--> statement-breakpoint
CREATE INDEX `rail_batch_entries_funding` ON `rail_batch_entries` (`funding_id`);