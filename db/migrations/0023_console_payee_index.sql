CREATE TABLE `payee_search_progress` (
	`id` integer PRIMARY KEY NOT NULL,
	`indexed_rowid` integer NOT NULL,
	CONSTRAINT "payee_search_progress_one_row" CHECK("payee_search_progress"."id" = 1)
);
--> statement-breakpoint
CREATE INDEX `payouts_method_last_four` ON `payouts` (`method_last_four`) WHERE "payouts"."method_last_four" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `payouts_last_failure_last_four` ON `payouts` (`last_failure_last_four`) WHERE "payouts"."last_failure_last_four" IS NOT NULL;--> statement-breakpoint
-- The console's payee index: a trigram index of each payout's full name and e-mail, keyed by the
-- payout's rowid (kept by VACUUM and VACUUM INTO, since payouts has indexes). Contentless: the
-- names stay in payouts only. The scheduler's sweep fills it from indexed_rowid on.
CREATE VIRTUAL TABLE `payee_search` USING fts5(`name`, `email`, content='', tokenize='trigram');
--> statement-breakpoint
INSERT INTO `payee_search_progress` (`id`, `indexed_rowid`) VALUES (1, 0);
