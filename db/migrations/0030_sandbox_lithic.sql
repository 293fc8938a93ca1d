CREATE TABLE `sandbox_lithic_cards` (
	`token` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`idempotency_key` text,
	`request` text NOT NULL,
	`answer` text NOT NULL,
	`card` text NOT NULL,
	`transactions` text DEFAULT '[]' NOT NULL,
	`auth_rules` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sandbox_lithic_cards_key` ON `sandbox_lithic_cards` (`company_id`,`idempotency_key`);