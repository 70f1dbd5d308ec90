CREATE TABLE `tls_attestors` (
	`id` integer PRIMARY KEY NOT NULL,
	`address` blob NOT NULL,
	`name` text NOT NULL,
	`added_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tls_attestors_address_uq` ON `tls_attestors` (`address`);--> statement-breakpoint
CREATE TABLE `used_claims` (
	`digest` blob PRIMARY KEY NOT NULL,
	`attestation_id` blob NOT NULL
);
--> statement-breakpoint
ALTER TABLE `attestations` ADD `attestor` blob;--> statement-breakpoint
ALTER TABLE `schemas` ADD `proof` text DEFAULT 'none' NOT NULL;