DROP INDEX `rail_batch_entries_trace`;--> statement-breakpoint
CREATE INDEX `rail_batch_entries_trace` ON `rail_batch_entries` (`trace_number`);