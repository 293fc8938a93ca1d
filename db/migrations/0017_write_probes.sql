CREATE TABLE `write_probes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`probed_at` integer NOT NULL,
	`padding` blob NOT NULL
);
