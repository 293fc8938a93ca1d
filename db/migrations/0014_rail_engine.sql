CREATE TABLE `rail_batch_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`batch_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`started_at` integer NOT NULL,
	`answered_at` integer,
	`outcome` text,
	`detail` text,
	FOREIGN KEY (`batch_id`) REFERENCES `rail_batches`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `rail_batch_attempts_batch` ON `rail_batch_attempts` (`batch_id`,`attempt`);--> statement-breakpoint
ALTER TABLE `rail_batches` ADD `downloaded_at` integer;--> statement-breakpoint
ALTER TABLE `scheduled_jobs` ADD `lease_holder` text;