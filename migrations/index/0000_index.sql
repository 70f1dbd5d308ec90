CREATE TABLE "attestation" (
	"id" text PRIMARY KEY NOT NULL,
	"schema_id" text NOT NULL,
	"attester" text NOT NULL,
	"recipient" text NOT NULL,
	"ref_uid" text NOT NULL,
	"revocable" boolean NOT NULL,
	"revoked" boolean NOT NULL,
	"revocation_time" integer NOT NULL,
	"expiration_time" integer NOT NULL,
	"time" integer NOT NULL,
	"time_created" integer NOT NULL,
	"txid" text NOT NULL,
	"data" text NOT NULL,
	"decoded_data_json" text NOT NULL,
	"ipfs_hash" text NOT NULL,
	"is_offchain" boolean NOT NULL,
	"provider" text NOT NULL,
	"bucket_values" jsonb NOT NULL,
	"attestors" jsonb NOT NULL,
	"freshness_half_life" integer NOT NULL,
	"revoker" text,
	"revocation_reason" text,
	"superseded_by" text,
	"revocation_input" integer,
	"input_index" integer NOT NULL,
	"notice_index" integer NOT NULL,
	"position" bigint NOT NULL,
	"proven" boolean NOT NULL,
	CONSTRAINT "attestation_position_unique" UNIQUE("position")
);
--> statement-breakpoint
CREATE TABLE "index_state" (
	"id" integer PRIMARY KEY NOT NULL,
	"application" text NOT NULL,
	"cursor" text,
	"last_input" integer NOT NULL,
	"attestation_count" bigint NOT NULL,
	"proven_through" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "input" (
	"index" integer PRIMARY KEY NOT NULL,
	"sender" text NOT NULL,
	"block_number" bigint NOT NULL,
	"time" integer NOT NULL,
	"txid" text NOT NULL,
	"notices" integer NOT NULL,
	"notices_hash" text NOT NULL,
	"proven" boolean NOT NULL
);
--> statement-breakpoint
CREATE TABLE "schema" (
	"id" text PRIMARY KEY NOT NULL,
	"schema" text NOT NULL,
	"creator" text NOT NULL,
	"resolver" text NOT NULL,
	"revocable" boolean NOT NULL,
	"index" text NOT NULL,
	"txid" text NOT NULL,
	"time" integer NOT NULL,
	"name" text NOT NULL,
	"provider" text NOT NULL,
	"description" text NOT NULL,
	"attestation_count" integer NOT NULL,
	"input_index" integer NOT NULL,
	"proven" boolean NOT NULL
);
--> statement-breakpoint
CREATE INDEX "attestation_time" ON "attestation" USING btree ("time","position");--> statement-breakpoint
CREATE INDEX "attestation_recipient_time" ON "attestation" USING btree ("recipient","time","position");--> statement-breakpoint
CREATE INDEX "attestation_attester_time" ON "attestation" USING btree ("attester","time","position");--> statement-breakpoint
CREATE INDEX "attestation_schema_time" ON "attestation" USING btree ("schema_id","time","position");--> statement-breakpoint
CREATE INDEX "attestation_input" ON "attestation" USING btree ("input_index");--> statement-breakpoint
CREATE INDEX "schema_time" ON "schema" USING btree ("time");--> statement-breakpoint
CREATE INDEX "schema_input" ON "schema" USING btree ("input_index");