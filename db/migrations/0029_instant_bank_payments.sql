PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_instant_transfers` (
	`reference` text PRIMARY KEY NOT NULL,
	`payout_id` text NOT NULL,
	`company_id` text NOT NULL,
	`card_token_id` text,
	`validation_id` text,
	`transfer_id` text NOT NULL,
	`route` text NOT NULL,
	`status` text NOT NULL,
	`checks` integer DEFAULT 0 NOT NULL,
	`checked_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_instant_transfers`("reference", "payout_id", "company_id", "card_token_id", "validation_id", "transfer_id", "route", "status", "checks", "checked_at", "created_at") SELECT "reference", "payout_id", "company_id", "card_token_id", "validation_id", "transfer_id", "route", "status", "checks", "checked_at", "created_at" FROM `instant_transfers`;--> statement-breakpoint
DROP TABLE `instant_transfers`;--> statement-breakpoint
ALTER TABLE `__new_instant_transfers` RENAME TO `instant_transfers`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `instant_transfers_transfer` ON `instant_transfers` (`transfer_id`);