CREATE TABLE `sandbox_paypal_batches` (
	`payout_batch_id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`sender_batch_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sandbox_paypal_batches_sender` ON `sandbox_paypal_batches` (`company_id`,`sender_batch_id`);--> statement-breakpoint
CREATE TABLE `sandbox_paypal_items` (
	`payout_item_id` text PRIMARY KEY NOT NULL,
	`payout_batch_id` text NOT NULL,
	`company_id` text NOT NULL,
	`position` integer NOT NULL,
	`sender_item_id` text NOT NULL,
	`recipient_type` text NOT NULL,
	`recipient_wallet` text NOT NULL,
	`receiver` text NOT NULL,
	`amount_value` text NOT NULL,
	`transaction_status` text NOT NULL,
	`error_name` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`payout_batch_id`) REFERENCES `sandbox_paypal_batches`(`payout_batch_id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sandbox_paypal_items_position` ON `sandbox_paypal_items` (`payout_batch_id`,`position`);