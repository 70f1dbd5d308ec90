CREATE TABLE `nullifier_key_set` (
	`id` integer PRIMARY KEY NOT NULL,
	`input_index` integer NOT NULL,
	`item_index` integer,
	`threshold` integer NOT NULL,
	`group_key` blob NOT NULL,
	`registered_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `nullifier_key_shares` (
	`share_index` integer PRIMARY KEY NOT NULL,
	`commitment` blob NOT NULL,
	`attestor` blob NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `nullifier_key_shares_attestor_uq` ON `nullifier_key_shares` (`attestor`);--> statement-breakpoint
CREATE TABLE `nullifiers` (
	`schema_id` blob NOT NULL,
	`nullifier` blob NOT NULL,
	`owner` blob NOT NULL,
	`attestation_id` blob NOT NULL,
	`input_index` integer NOT NULL,
	PRIMARY KEY(`schema_id`, `nullifier`)
);
--> statement-breakpoint
ALTER TABLE `schemas` ADD `account_id_field` text;