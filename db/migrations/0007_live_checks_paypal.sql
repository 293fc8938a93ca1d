CREATE TABLE `check_exceptions` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`import_id` text NOT NULL,
	`check_number` integer NOT NULL,
	`check_id` text,
	`kind` text NOT NULL,
	`paid_amount_cents` integer NOT NULL,
	`paid_date` text NOT NULL,
	`status` text NOT NULL,
	`resolution` text,
	`ledger_transaction_id` text,
	`resolved_by` text,
	`resolved_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`import_id`) REFERENCES `check_paid_imports`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`check_id`) REFERENCES `checks`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `check_exceptions_company_status` ON `check_exceptions` (`company_id`,`status`);--> statement-breakpoint
CREATE TABLE `check_files` (
	`batch_id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`kind` text NOT NULL,
	`positive_pay_file_id` text,
	`content_sealed` text NOT NULL,
	`sha256` text NOT NULL,
	`byte_size` integer NOT NULL,
	`file_name` text NOT NULL,
	`issue_count` integer NOT NULL,
	`void_count` integer NOT NULL,
	`total_cents` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`batch_id`) REFERENCES `rail_batches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`positive_pay_file_id`) REFERENCES `rail_batches`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `check_files_company_created` ON `check_files` (`company_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `check_paid_imports` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`sha256` text NOT NULL,
	`source` text NOT NULL,
	`file_name` text NOT NULL,
	`item_count` integer NOT NULL,
	`matched_count` integer NOT NULL,
	`exception_count` integer NOT NULL,
	`report` text NOT NULL,
	`imported_by` text,
	`imported_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `check_paid_imports_sha` ON `check_paid_imports` (`company_id`,`sha256`);--> statement-breakpoint
CREATE TABLE `check_sequences` (
	`company_id` text PRIMARY KEY NOT NULL,
	`next_number` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `checks` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`check_number` integer NOT NULL,
	`payout_id` text NOT NULL,
	`reference` text NOT NULL,
	`kind` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`payee_name` text NOT NULL,
	`memo` text,
	`postage_code` text,
	`status` text NOT NULL,
	`issue_date` text NOT NULL,
	`issued_at` integer NOT NULL,
	`issue_file_id` text,
	`print_file_id` text,
	`paid_date` text,
	`paid_amount_cents` integer,
	`paid_at` integer,
	`voided_at` integer,
	`void_reason` text,
	`voided_by` text,
	`void_file_id` text,
	`stale_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`issue_file_id`) REFERENCES `rail_batches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`print_file_id`) REFERENCES `rail_batches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`void_file_id`) REFERENCES `rail_batches`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "checks_amount_positive" CHECK("checks"."amount_cents" > 0),
	CONSTRAINT "checks_number_positive" CHECK("checks"."check_number" > 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `checks_company_number` ON `checks` (`company_id`,`check_number`);--> statement-breakpoint
CREATE UNIQUE INDEX `checks_reference` ON `checks` (`reference`);--> statement-breakpoint
CREATE INDEX `checks_payout` ON `checks` (`payout_id`);--> statement-breakpoint
CREATE INDEX `checks_company_status` ON `checks` (`company_id`,`status`,`issued_at`);--> statement-breakpoint
CREATE TABLE `paypal_items` (
	`entry_id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`batch_id` text NOT NULL,
	`recipient_wallet` text NOT NULL,
	`payout_item_id` text,
	`transaction_status` text,
	`error_name` text,
	`checked_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`entry_id`) REFERENCES `rail_batch_entries`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`batch_id`) REFERENCES `rail_batches`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `paypal_items_item` ON `paypal_items` (`payout_item_id`);--> statement-breakpoint
CREATE INDEX `paypal_items_batch` ON `paypal_items` (`batch_id`);--> statement-breakpoint
CREATE TABLE `paypal_notices` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`event_type` text NOT NULL,
	`resource_id` text NOT NULL,
	`received_at` integer NOT NULL,
	`processed_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `paypal_settings` (
	`company_id` text PRIMARY KEY NOT NULL,
	`settings_sealed` text NOT NULL,
	`fingerprint` text NOT NULL,
	`updated_by` text,
	`updated_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
