-- The console's payee search: a trigram index of each payout's full name and e-mail, keyed by the
-- payout's rowid (kept by VACUUM and VACUUM INTO, since payouts has indexes). Contentless: the
-- names stay in payouts only. The triggers keep it in step with every write to payouts.
CREATE VIRTUAL TABLE `payee_search` USING fts5(`name`, `email`, content='', contentless_delete=1, tokenize='trigram');
--> statement-breakpoint
INSERT INTO `payee_search` (`rowid`, `name`, `email`)
  SELECT `rowid`, coalesce(`first_name`, '') || ' ' || coalesce(`last_name`, ''), `email` FROM `payouts`;
--> statement-breakpoint
CREATE TRIGGER `payee_search_insert` AFTER INSERT ON `payouts` BEGIN
  INSERT INTO `payee_search` (`rowid`, `name`, `email`)
    VALUES (new.`rowid`, coalesce(new.`first_name`, '') || ' ' || coalesce(new.`last_name`, ''), new.`email`);
END;
--> statement-breakpoint
CREATE TRIGGER `payee_search_update` AFTER UPDATE OF `first_name`, `last_name`, `email` ON `payouts` BEGIN
  INSERT OR REPLACE INTO `payee_search` (`rowid`, `name`, `email`)
    VALUES (new.`rowid`, coalesce(new.`first_name`, '') || ' ' || coalesce(new.`last_name`, ''), new.`email`);
END;
--> statement-breakpoint
CREATE TRIGGER `payee_search_delete` AFTER DELETE ON `payouts` BEGIN
  DELETE FROM `payee_search` WHERE `rowid` = old.`rowid`;
END;
