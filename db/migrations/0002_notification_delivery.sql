ALTER TABLE `notifications` ADD `next_attempt_at` integer;--> statement-breakpoint
ALTER TABLE `notifications` ADD `last_error` text;