CREATE TABLE `increase_simulator_cards` (
	`token_id` text PRIMARY KEY NOT NULL,
	`card_number` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `increase_simulator_idempotency` (
	`key` text PRIMARY KEY NOT NULL,
	`request_body` text NOT NULL,
	`object_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `increase_simulator_objects` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`type` text NOT NULL,
	`object` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
