CREATE TABLE `ach_file_pieces` (
	`batch_id` text NOT NULL,
	`part` integer NOT NULL,
	`content` text NOT NULL,
	PRIMARY KEY(`batch_id`, `part`),
	FOREIGN KEY (`batch_id`) REFERENCES `rail_batches`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
ALTER TABLE `ach_files` ADD `content_pieces` integer;