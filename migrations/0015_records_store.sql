CREATE TABLE `dead_record_batches` (
	`batch` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`records` integer NOT NULL,
	`times` integer NOT NULL,
	`last_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `record_object_deletes` (
	`key` text PRIMARY KEY NOT NULL,
	`after` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `record_rollups` (
	`account_id` text NOT NULL,
	`hour` integer NOT NULL,
	`model` text NOT NULL,
	`key_hash` text NOT NULL,
	`provider_name` text NOT NULL,
	`inbound_api` text NOT NULL,
	`requests` integer NOT NULL,
	`tokens_prompt` integer NOT NULL,
	`tokens_completion` integer NOT NULL,
	`tokens_cached` integer NOT NULL,
	`tokens_cache_write` integer NOT NULL,
	`cost_nano` integer NOT NULL,
	PRIMARY KEY(`account_id`, `hour`, `model`, `key_hash`, `provider_name`, `inbound_api`)
);
--> statement-breakpoint
ALTER TABLE `archive_parts` ADD `batch` text;--> statement-breakpoint
CREATE UNIQUE INDEX `archive_parts_batch` ON `archive_parts` (`account_id`,`day`,`batch`);--> statement-breakpoint
CREATE INDEX `archive_parts_records` ON `archive_parts` (`records`);