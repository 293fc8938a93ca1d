DROP INDEX `rail_batch_entries_batch`;--> statement-breakpoint
CREATE INDEX `rail_batch_entries_batch` ON `rail_batch_entries` (`batch_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `scheduled_jobs_subject` ON `scheduled_jobs` (`subject_id`,`kind`);