CREATE TABLE `rail_exceptions` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`rail` text NOT NULL,
	`entry_id` text NOT NULL,
	`batch_id` text,
	`payout_id` text,
	`reference` text NOT NULL,
	`outcome` text NOT NULL,
	`return_code` text,
	`amount_cents` integer NOT NULL,
	`payout_status` text,
	`reason` text NOT NULL,
	`status` text NOT NULL,
	`resolution` text,
	`ledger_transaction_id` text,
	`resolved_by` text,
	`resolved_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`entry_id`) REFERENCES `rail_batch_entries`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`batch_id`) REFERENCES `rail_batches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `rail_exceptions_entry_outcome` ON `rail_exceptions` (`entry_id`,`outcome`);--> statement-breakpoint
CREATE INDEX `rail_exceptions_status` ON `rail_exceptions` (`status`,`created_at`);--> statement-breakpoint
CREATE TABLE `rail_recall_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`entry_id` text NOT NULL,
	`payout_id` text,
	`batch_id` text,
	`reason` text NOT NULL,
	`requested_by` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`entry_id`) REFERENCES `rail_batch_entries`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`batch_id`) REFERENCES `rail_batches`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `rail_recall_requests_entry_id_unique` ON `rail_recall_requests` (`entry_id`);