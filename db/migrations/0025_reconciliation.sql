CREATE TABLE `ledger_statements` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`line_id` text NOT NULL,
	`statement_date` text NOT NULL,
	`seq` integer NOT NULL,
	`body` text NOT NULL,
	`prev_hash` text NOT NULL,
	`hash` text NOT NULL,
	`signature` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`line_id`) REFERENCES `business_lines`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ledger_statements_line_date` ON `ledger_statements` (`line_id`,`statement_date`);--> statement-breakpoint
CREATE UNIQUE INDEX `ledger_statements_line_seq` ON `ledger_statements` (`line_id`,`seq`);--> statement-breakpoint
CREATE TABLE `recon_exceptions` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`day_id` text NOT NULL,
	`statement_date` text NOT NULL,
	`account_last_four` text NOT NULL,
	`side` text NOT NULL,
	`kind` text NOT NULL,
	`line_id` text,
	`subject_id` text,
	`direction` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`reason` text NOT NULL,
	`status` text NOT NULL,
	`note` text,
	`ledger_transaction_id` text,
	`resolved_by` text,
	`resolved_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`day_id`) REFERENCES `statement_days`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`line_id`) REFERENCES `statement_lines`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `recon_exceptions_status` ON `recon_exceptions` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `recon_exceptions_company_status` ON `recon_exceptions` (`company_id`,`status`);--> statement-breakpoint
CREATE TABLE `statement_days` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`import_id` text NOT NULL,
	`account_key` text NOT NULL,
	`account_last_four` text NOT NULL,
	`account_role` text NOT NULL,
	`statement_date` text NOT NULL,
	`opening_cents` integer,
	`closing_cents` integer,
	`credit_cents` integer NOT NULL,
	`debit_cents` integer NOT NULL,
	`expected_net_cents` integer NOT NULL,
	`line_count` integer NOT NULL,
	`matched_count` integer NOT NULL,
	`exception_count` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`import_id`) REFERENCES `statement_imports`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `statement_days_account_date` ON `statement_days` (`company_id`,`account_key`,`statement_date`);--> statement-breakpoint
CREATE INDEX `statement_days_company_date` ON `statement_days` (`company_id`,`statement_date`);--> statement-breakpoint
CREATE TABLE `statement_imports` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`sha256` text NOT NULL,
	`format` text NOT NULL,
	`source` text NOT NULL,
	`file_name` text NOT NULL,
	`bank_file_id` text NOT NULL,
	`day_count` integer NOT NULL,
	`line_count` integer NOT NULL,
	`matched_count` integer NOT NULL,
	`exception_count` integer NOT NULL,
	`report` text NOT NULL,
	`imported_by` text,
	`imported_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `statement_imports_sha` ON `statement_imports` (`company_id`,`sha256`);--> statement-breakpoint
CREATE TABLE `statement_lines` (
	`id` text PRIMARY KEY NOT NULL,
	`day_id` text NOT NULL,
	`company_id` text NOT NULL,
	`file_line` integer NOT NULL,
	`direction` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`type_code` text NOT NULL,
	`kind` text NOT NULL,
	`bank_reference` text,
	`customer_reference` text,
	`text` text NOT NULL,
	`match_kind` text,
	`match_subject_id` text,
	`match_reason` text,
	FOREIGN KEY (`day_id`) REFERENCES `statement_days`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `statement_lines_day` ON `statement_lines` (`day_id`);--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `ed25519_signatures` integer DEFAULT false NOT NULL;