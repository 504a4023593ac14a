CREATE TABLE `answer_cache_entries` (
	`account_id` text NOT NULL,
	`key` text NOT NULL,
	`bytes` integer NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `key`)
);
--> statement-breakpoint
CREATE INDEX `answer_cache_account_created` ON `answer_cache_entries` (`account_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `answer_cache_ttl_s` integer;--> statement-breakpoint
ALTER TABLE `generations` ADD `response_cache_source_id` text;