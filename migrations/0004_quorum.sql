ALTER TABLE `attestations` ADD `attestors` text;--> statement-breakpoint
ALTER TABLE `schemas` ADD `attestor_quorum` integer DEFAULT 1 NOT NULL;