DROP INDEX `rail_batch_entries_queue`;--> statement-breakpoint
CREATE INDEX `rail_batch_entries_queue` ON `rail_batch_entries` (`company_id`,`rail`,`batch_id`,`status`,`created_at`);