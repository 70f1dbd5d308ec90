CREATE TABLE `consent_nonces` (
	`owner` blob NOT NULL,
	`nonce` blob NOT NULL,
	`input_index` integer NOT NULL,
	PRIMARY KEY(`owner`, `nonce`)
);
--> statement-breakpoint
ALTER TABLE `grants` ADD `consent` text DEFAULT 'relayed' NOT NULL;--> statement-breakpoint
ALTER TABLE `schemas` ADD `require_signed_consent` integer DEFAULT false NOT NULL;