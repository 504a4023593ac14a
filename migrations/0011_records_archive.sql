CREATE TABLE `archive_parts` (
	`account_id` text NOT NULL,
	`day` text NOT NULL,
	`part` integer NOT NULL,
	`key` text NOT NULL,
	`state` text NOT NULL,
	`records` integer NOT NULL,
	`bytes` integer NOT NULL,
	`sha256` text NOT NULL,
	`first_at` integer NOT NULL,
	`last_at` integer NOT NULL,
	`cost_nano` integer NOT NULL,
	`written_at` integer NOT NULL,
	`archived_at` integer,
	`commit_id` text,
	PRIMARY KEY(`account_id`, `day`, `part`)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `archive_parts_key_unique` ON `archive_parts` (`key`);--> statement-breakpoint
CREATE INDEX `archive_parts_account_last` ON `archive_parts` (`account_id`,`last_at`);--> statement-breakpoint
CREATE TABLE `archive_rollups` (
	`account_id` text NOT NULL,
	`day` text NOT NULL,
	`part` integer NOT NULL,
	`model` text NOT NULL,
	`key_hash` text NOT NULL,
	`provider_name` text,
	`requests` integer NOT NULL,
	`tokens_prompt` integer NOT NULL,
	`tokens_completion` integer NOT NULL,
	`tokens_cached` integer NOT NULL,
	`cost_nano` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `archive_rollups_account_day` ON `archive_rollups` (`account_id`,`day`);--> statement-breakpoint
CREATE TABLE `archived_legacy_ids` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`day` text NOT NULL,
	`part` integer NOT NULL
);
--> statement-breakpoint
DROP INDEX `generations_model_provider`;--> statement-breakpoint
ALTER TABLE `generations` ADD `rev` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `generations_created` ON `generations` (`created_at`);