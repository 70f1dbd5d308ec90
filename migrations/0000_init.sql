CREATE TABLE `attestations` (
	`input_index` integer PRIMARY KEY NOT NULL,
	`attestation_id` blob NOT NULL,
	`schema_id` blob NOT NULL,
	`owner` blob NOT NULL,
	`encrypted_data` blob NOT NULL,
	`bucket_values` text NOT NULL,
	`timestamp` integer NOT NULL,
	`block_number` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `attestations_attestation_id_uq` ON `attestations` (`attestation_id`);--> statement-breakpoint
CREATE INDEX `attestations_owner_idx` ON `attestations` (`owner`,`input_index`);--> statement-breakpoint
CREATE TABLE `encryption_keys` (
	`input_index` integer PRIMARY KEY NOT NULL,
	`key_id` blob NOT NULL,
	`public_key` blob NOT NULL,
	`algorithm` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `encryption_keys_key_id_uq` ON `encryption_keys` (`key_id`);--> statement-breakpoint
CREATE TABLE `grants` (
	`input_index` integer PRIMARY KEY NOT NULL,
	`grant_id` blob NOT NULL,
	`owner` blob NOT NULL,
	`requester` blob NOT NULL,
	`schema_id` blob NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `grants_grant_id_uq` ON `grants` (`grant_id`);--> statement-breakpoint
CREATE INDEX `grants_owner_idx` ON `grants` (`owner`,`input_index`);--> statement-breakpoint
CREATE INDEX `grants_owner_requester_idx` ON `grants` (`owner`,`requester`,`input_index`);--> statement-breakpoint
CREATE TABLE `meta` (
	`id` integer PRIMARY KEY NOT NULL,
	`last_input_index` integer NOT NULL,
	`last_status` text NOT NULL,
	`processed_inputs` integer NOT NULL,
	`latest_timestamp` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `roles` (
	`address` blob NOT NULL,
	`role` text NOT NULL,
	PRIMARY KEY(`address`, `role`)
);
--> statement-breakpoint
CREATE TABLE `schemas` (
	`input_index` integer PRIMARY KEY NOT NULL,
	`schema_id` blob NOT NULL,
	`name` text NOT NULL,
	`description` text NOT NULL,
	`provider_type` text NOT NULL,
	`flow_type` text NOT NULL,
	`domain` text NOT NULL,
	`bucket_definitions` text NOT NULL,
	`data_keys` text NOT NULL,
	`freshness_half_life` real NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `schemas_schema_id_uq` ON `schemas` (`schema_id`);