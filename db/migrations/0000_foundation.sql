CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`secret_hash` text NOT NULL,
	`hint` text NOT NULL,
	`company_id` text,
	`user_id` text,
	`line_id` text,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	`revoked_at` integer,
	`replaced_by` text,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`line_id`) REFERENCES `business_lines`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "api_keys_owner_matches_kind" CHECK(("api_keys"."kind" = 'company' AND "api_keys"."company_id" IS NOT NULL AND "api_keys"."user_id" IS NULL AND "api_keys"."line_id" IS NULL)
     OR ("api_keys"."kind" = 'user' AND "api_keys"."user_id" IS NOT NULL AND "api_keys"."line_id" IS NULL)
     OR ("api_keys"."kind" = 'line' AND "api_keys"."line_id" IS NOT NULL AND "api_keys"."company_id" IS NOT NULL))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_secret_hash_unique` ON `api_keys` (`secret_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_owner` ON `api_keys` (`kind`,`company_id`,`user_id`,`line_id`);--> statement-breakpoint
CREATE TABLE `authorization_parties` (
	`id` text PRIMARY KEY NOT NULL,
	`disbursement_id` text NOT NULL,
	`party_uuid` text NOT NULL,
	`party_type` text DEFAULT 'INDIVIDUAL' NOT NULL,
	`title` text,
	`company_name` text,
	`email` text,
	`first_name` text,
	`last_name` text,
	`phone` text,
	FOREIGN KEY (`disbursement_id`) REFERENCES `disbursements`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `authorization_parties_uuid` ON `authorization_parties` (`disbursement_id`,`party_uuid`);--> statement-breakpoint
CREATE TABLE `business_lines` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`code` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `business_lines_company_code` ON `business_lines` (`company_id`,`code`);--> statement-breakpoint
CREATE TABLE `companies` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`tin` text NOT NULL,
	`retry_max` integer DEFAULT 1 NOT NULL,
	`retry_reasons` text DEFAULT '["rail_unavailable"]' NOT NULL,
	`created_at` integer NOT NULL,
	CONSTRAINT "companies_tin_digits" CHECK(length("companies"."tin") = 9)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `companies_tin_unique` ON `companies` (`tin`);--> statement-breakpoint
CREATE TABLE `delivery_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`delivery_id` text NOT NULL,
	`attempted_at` integer NOT NULL,
	`status_code` integer,
	`duration_ms` integer NOT NULL,
	`response_excerpt` text,
	`error` text,
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `delivery_attempts_delivery` ON `delivery_attempts` (`delivery_id`,`id`);--> statement-breakpoint
CREATE TABLE `disbursements` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`line_id` text NOT NULL,
	`kind` text NOT NULL,
	`external_uuid` text NOT NULL,
	`claim_id` text,
	`large_disbursement` integer DEFAULT false NOT NULL,
	`payor_user_id` text,
	`request_fingerprint` text NOT NULL,
	`memo` text,
	`metadata` text DEFAULT '{}' NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`line_id`) REFERENCES `business_lines`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `disbursements_company_kind_uuid` ON `disbursements` (`company_id`,`kind`,`external_uuid`);--> statement-breakpoint
CREATE INDEX `disbursements_company_created` ON `disbursements` (`company_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `documents` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`name` text NOT NULL,
	`doc_type_id` integer NOT NULL,
	`is_sign_required` integer DEFAULT false NOT NULL,
	`one_time_use` integer DEFAULT false NOT NULL,
	`used_by_payout_id` text,
	`sha256` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`content` blob NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "documents_type" CHECK("documents"."doc_type_id" BETWEEN 1 AND 4)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `documents_company_name` ON `documents` (`company_id`,`name`);--> statement-breakpoint
CREATE TABLE `endorsements` (
	`id` text PRIMARY KEY NOT NULL,
	`payout_id` text NOT NULL,
	`party_uuid` text NOT NULL,
	`status` text NOT NULL,
	`contact_email` text,
	`contact_phone` text,
	`typed_name` text,
	`decided_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `endorsements_payout_party` ON `endorsements` (`payout_id`,`party_uuid`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`line_id` text,
	`type` text,
	`event_type_id` integer NOT NULL,
	`disbursement_id` text,
	`payout_id` text,
	`payee_id` text,
	`reason` text,
	`data` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`line_id`) REFERENCES `business_lines`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `events_company_created` ON `events` (`company_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `fee_schedules` (
	`company_id` text NOT NULL,
	`payment_method_id` integer NOT NULL,
	`payor_fee_cents` integer DEFAULT 0 NOT NULL,
	`payee_fee_cents` integer DEFAULT 0 NOT NULL,
	`service_fee_cents` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`company_id`, `payment_method_id`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "fee_schedules_method" CHECK("fee_schedules"."payment_method_id" BETWEEN 1 AND 7),
	CONSTRAINT "fee_schedules_non_negative" CHECK("fee_schedules"."payor_fee_cents" >= 0 AND "fee_schedules"."payee_fee_cents" >= 0 AND "fee_schedules"."service_fee_cents" >= 0)
);
--> statement-breakpoint
CREATE TABLE `fundings` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`line_id` text NOT NULL,
	`funding_uuid` text,
	`payment_method` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`description` text NOT NULL,
	`large_disbursement` integer NOT NULL,
	`status` text NOT NULL,
	`request_fingerprint` text NOT NULL,
	`expected_available_at` integer,
	`completed_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`line_id`) REFERENCES `business_lines`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "fundings_amount_positive" CHECK("fundings"."amount_cents" > 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `fundings_company_uuid` ON `fundings` (`company_id`,`funding_uuid`);--> statement-breakpoint
CREATE TABLE `idempotency_records` (
	`company_id` text NOT NULL,
	`scope_line` text NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`status` text NOT NULL,
	`lease_until` integer,
	`response_status` integer,
	`response_headers` text,
	`response_body` blob,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`company_id`, `scope_line`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_records_expiry` ON `idempotency_records` (`expires_at`);--> statement-breakpoint
CREATE TABLE `ledger_accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`line_id` text NOT NULL,
	`code` text NOT NULL,
	`balance_cents` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`line_id`) REFERENCES `business_lines`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "ledger_accounts_never_negative" CHECK("ledger_accounts"."code" NOT IN ('available', 'reserved') OR "ledger_accounts"."balance_cents" >= 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ledger_accounts_line_code` ON `ledger_accounts` (`line_id`,`code`);--> statement-breakpoint
CREATE TABLE `ledger_entries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`transaction_id` text NOT NULL,
	`account_id` text NOT NULL,
	`amount_cents` integer NOT NULL,
	FOREIGN KEY (`transaction_id`) REFERENCES `ledger_transactions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`account_id`) REFERENCES `ledger_accounts`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "ledger_entries_non_zero" CHECK("ledger_entries"."amount_cents" <> 0)
);
--> statement-breakpoint
CREATE INDEX `ledger_entries_transaction` ON `ledger_entries` (`transaction_id`);--> statement-breakpoint
CREATE INDEX `ledger_entries_account` ON `ledger_entries` (`account_id`);--> statement-breakpoint
CREATE TABLE `ledger_transactions` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`line_id` text NOT NULL,
	`kind` text NOT NULL,
	`payout_id` text,
	`funding_id` text,
	`posted_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`line_id`) REFERENCES `business_lines`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `ledger_transactions_line_posted` ON `ledger_transactions` (`line_id`,`posted_at`);--> statement-breakpoint
CREATE TABLE `memberships` (
	`user_id` text NOT NULL,
	`company_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `company_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text,
	`channel` text NOT NULL,
	`recipient` text NOT NULL,
	`subject` text,
	`body` text NOT NULL,
	`links` text DEFAULT '[]' NOT NULL,
	`code` text,
	`status` text NOT NULL,
	`attempt_count` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`sent_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `notifications_status_created` ON `notifications` (`status`,`created_at`);--> statement-breakpoint
CREATE TABLE `payees` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`line_id` text NOT NULL,
	`external_id` text NOT NULL,
	`name` text,
	`email` text,
	`phone` text,
	`language` text DEFAULT 'en' NOT NULL,
	`contact_channel` text DEFAULT 'email' NOT NULL,
	`modality_defaults` text DEFAULT '[]' NOT NULL,
	`address` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`line_id`) REFERENCES `business_lines`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payees_line_external` ON `payees` (`company_id`,`line_id`,`external_id`);--> statement-breakpoint
CREATE TABLE `payout_transitions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`payout_id` text NOT NULL,
	`from_status` text,
	`to_status` text NOT NULL,
	`detail` text,
	`at` integer NOT NULL,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `payout_transitions_payout` ON `payout_transitions` (`payout_id`,`id`);--> statement-breakpoint
CREATE TABLE `payouts` (
	`id` text PRIMARY KEY NOT NULL,
	`disbursement_id` text NOT NULL,
	`company_id` text NOT NULL,
	`line_id` text NOT NULL,
	`payee_uuid` text NOT NULL,
	`payee_id` text,
	`payee_type_id` integer,
	`first_name` text,
	`last_name` text,
	`email` text,
	`phone` text,
	`address_one` text,
	`address_two` text,
	`city` text,
	`state` text,
	`zip_code` text,
	`delivery_options` text DEFAULT '{"email":true,"sms":false}' NOT NULL,
	`allowed_payment_method_ids` text DEFAULT '[]' NOT NULL,
	`permission_required_from` text DEFAULT '[]' NOT NULL,
	`field_values` text DEFAULT '[]' NOT NULL,
	`payment_method_settings` text DEFAULT '{}' NOT NULL,
	`custom_document_uuids` text DEFAULT '[]' NOT NULL,
	`amount_cents` integer NOT NULL,
	`held_cents` integer DEFAULT 0 NOT NULL,
	`status` text NOT NULL,
	`payment_method_id` integer,
	`method_details` text,
	`method_last_four` text,
	`payor_fee_cents` integer DEFAULT 0 NOT NULL,
	`payee_fee_cents` integer DEFAULT 0 NOT NULL,
	`service_fee_cents` integer DEFAULT 0 NOT NULL,
	`rail_reference` text,
	`failure_reason` text,
	`retry_count` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`disbursement_id`) REFERENCES `disbursements`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`line_id`) REFERENCES `business_lines`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payee_id`) REFERENCES `payees`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "payouts_amount_positive" CHECK("payouts"."amount_cents" > 0),
	CONSTRAINT "payouts_held_non_negative" CHECK("payouts"."held_cents" >= 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payouts_disbursement_payee` ON `payouts` (`disbursement_id`,`payee_uuid`);--> statement-breakpoint
CREATE INDEX `payouts_company_status` ON `payouts` (`company_id`,`status`,`created_at`);--> statement-breakpoint
CREATE TABLE `portal_links` (
	`id` text PRIMARY KEY NOT NULL,
	`payout_id` text NOT NULL,
	`party_uuid` text,
	`token_hash` text NOT NULL,
	`code_hash` text,
	`code_expires_at` integer,
	`failed_code_attempts` integer DEFAULT 0 NOT NULL,
	`locked_until` integer,
	`verified_at` integer,
	`expires_at` integer NOT NULL,
	`replaced_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `portal_links_token_hash_unique` ON `portal_links` (`token_hash`);--> statement-breakpoint
CREATE INDEX `portal_links_payout` ON `portal_links` (`payout_id`);--> statement-breakpoint
CREATE TABLE `sandbox_clocks` (
	`company_id` text PRIMARY KEY NOT NULL,
	`offset_ms` integer DEFAULT 0 NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `scheduled_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`kind` text NOT NULL,
	`subject_id` text NOT NULL,
	`due_at` integer NOT NULL,
	`payload` text DEFAULT '{}' NOT NULL,
	`done_at` integer,
	`error` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `scheduled_jobs_due` ON `scheduled_jobs` (`done_at`,`due_at`);--> statement-breakpoint
CREATE INDEX `scheduled_jobs_company_due` ON `scheduled_jobs` (`company_id`,`done_at`,`due_at`);--> statement-breakpoint
CREATE TABLE `signed_documents` (
	`id` text PRIMARY KEY NOT NULL,
	`document_id` text NOT NULL,
	`payout_id` text NOT NULL,
	`signed_by` text NOT NULL,
	`signed_at` integer NOT NULL,
	`signer_ip` text,
	`signer_user_agent` text,
	`original_sha256` text NOT NULL,
	`content` blob NOT NULL,
	FOREIGN KEY (`document_id`) REFERENCES `documents`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payout_id`) REFERENCES `payouts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `signed_documents_payout` ON `signed_documents` (`payout_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`endpoint_id` text NOT NULL,
	`event_id` text NOT NULL,
	`status` text NOT NULL,
	`manual` integer DEFAULT false NOT NULL,
	`attempt_count` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`claimed_until` integer,
	`last_signature` text,
	`created_at` integer NOT NULL,
	`completed_at` integer,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`event_id`) REFERENCES `events`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint` ON `webhook_deliveries` (`endpoint_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_event` ON `webhook_deliveries` (`event_id`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` text NOT NULL,
	`line_id` text,
	`surface` text NOT NULL,
	`url` text NOT NULL,
	`events` text DEFAULT '[]' NOT NULL,
	`description` text,
	`secret_ciphertext` text NOT NULL,
	`previous_secret_ciphertext` text,
	`previous_secret_expires_at` integer,
	`disabled_at` integer,
	`disabled_reason` text,
	`deleted_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`line_id`) REFERENCES `business_lines`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_company` ON `webhook_endpoints` (`company_id`);