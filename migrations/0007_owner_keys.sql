CREATE TABLE `grant_keys` (
	`grant_id` blob NOT NULL,
	`attestation_id` blob NOT NULL,
	`key_id` blob NOT NULL,
	`sealed_key` blob NOT NULL,
	`input_index` integer NOT NULL,
	PRIMARY KEY(`grant_id`, `attestation_id`)
);
--> statement-breakpoint
CREATE INDEX `grant_keys_attestation_idx` ON `grant_keys` (`attestation_id`);--> statement-breakpoint
CREATE TABLE `owner_keys` (
	`id` integer PRIMARY KEY NOT NULL,
	`input_index` integer NOT NULL,
	`item_index` integer,
	`owner` blob NOT NULL,
	`key_id` blob NOT NULL,
	`public_key` blob NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `owner_keys_owner_idx` ON `owner_keys` (`owner`,`id`);--> statement-breakpoint
ALTER TABLE `schemas` ADD `sealing` text DEFAULT 'admin' NOT NULL;