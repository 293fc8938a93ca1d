CREATE TABLE `unclaimed_dormancy` (
	`company_id` text NOT NULL,
	`state` text NOT NULL,
	`property_type` text NOT NULL,
	`days` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`company_id`, `state`, `property_type`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "unclaimed_dormancy_days_positive" CHECK("unclaimed_dormancy"."days" > 0)
);
--> statement-breakpoint
CREATE TABLE `unclaimed_notices` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`payout_id` text NOT NULL,
	`channel` text NOT NULL,
	`outcome` text NOT NULL,
	`sent_at` integer NOT NULL,
	`responded_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `unclaimed_notices_payout` ON `unclaimed_notices` (`payout_id`);--> statement-breakpoint
CREATE TABLE `unclaimed_reports` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`state` text NOT NULL,
	`report_year` integer NOT NULL,
	`payout_ids` text NOT NULL,
	`total_cents` integer NOT NULL,
	`sha256` text NOT NULL,
	`status` text NOT NULL,
	`created_at` integer NOT NULL,
	`remitted_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `unclaimed_reports_company` ON `unclaimed_reports` (`company_id`,`state`,`report_year`);--> statement-breakpoint
ALTER TABLE `companies` ADD `offer_expiry_action` text DEFAULT 'cancel' NOT NULL;--> statement-breakpoint
ALTER TABLE `companies` ADD `pay_by_days` integer;--> statement-breakpoint
ALTER TABLE `companies` ADD `holder_state` text;--> statement-breakpoint
ALTER TABLE `companies` ADD `sandbox_dormancy_days` integer;--> statement-breakpoint
ALTER TABLE `payouts` ADD `pay_by` text;--> statement-breakpoint
ALTER TABLE `payouts` ADD `fell_back_at` integer;--> statement-breakpoint
ALTER TABLE `payouts` ADD `offer_expired_at` integer;--> statement-breakpoint
ALTER TABLE `payouts` ADD `escheated_state` text;--> statement-breakpoint
ALTER TABLE `payouts` ADD `escheated_at` integer;