CREATE TABLE `operator_enrollments` (
	`id` text PRIMARY KEY NOT NULL,
	`operator_id` text NOT NULL,
	`code_hash` text NOT NULL,
	`purpose` text NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`replaced_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`operator_id`) REFERENCES `operators`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `operator_enrollments_code_hash_unique` ON `operator_enrollments` (`code_hash`);--> statement-breakpoint
CREATE INDEX `operator_enrollments_operator` ON `operator_enrollments` (`operator_id`);--> statement-breakpoint
CREATE TRIGGER `audit_log_no_replace` BEFORE INSERT ON `audit_log` WHEN EXISTS (SELECT 1 FROM `audit_log` WHERE `seq` = NEW.`seq` OR `id` = NEW.`id`) BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
