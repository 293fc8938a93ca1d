CREATE TABLE `__sandbox_seed` (
	`id` integer PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`lease_until` integer NOT NULL,
	`credentials_sealed` text,
	CONSTRAINT "sandbox_seed_one_row" CHECK("__sandbox_seed"."id" = 1)
);
