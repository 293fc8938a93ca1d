CREATE TABLE `payment_approval_rules` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`line_id` text DEFAULT '' NOT NULL,
	`payment_method_id` integer DEFAULT 0 NOT NULL,
	`threshold_cents` integer NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payment_approval_rules_scope` ON `payment_approval_rules` (`company_id`,`line_id`,`payment_method_id`);