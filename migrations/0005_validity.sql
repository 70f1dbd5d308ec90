CREATE TABLE `revocations` (
	`attestation_id` blob PRIMARY KEY NOT NULL,
	`input_index` integer NOT NULL,
	`item_index` integer,
	`revoked_at` integer NOT NULL,
	`revoker` blob NOT NULL,
	`reason` text NOT NULL,
	`superseded_by` blob
);
--> statement-breakpoint
ALTER TABLE `attestations` ADD `attester` blob;--> statement-breakpoint
ALTER TABLE `attestations` ADD `expires_at` integer;--> statement-breakpoint
ALTER TABLE `schemas` ADD `validity_period` integer;