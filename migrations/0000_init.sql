CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_email_unique` ON `accounts` (`email`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`hash` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`label` text NOT NULL,
	`disabled` integer DEFAULT false NOT NULL,
	`limit_nano` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `api_keys_account` ON `api_keys` (`account_id`);--> statement-breakpoint
CREATE TABLE `generations` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`model` text NOT NULL,
	`provider_name` text,
	`app` text,
	`streamed` integer NOT NULL,
	`created_at` integer NOT NULL,
	`latency_ms` integer,
	`generation_time_ms` integer,
	`tokens_prompt` integer NOT NULL,
	`tokens_completion` integer NOT NULL,
	`tokens_reasoning` integer NOT NULL,
	`cost_nano` integer NOT NULL,
	`finish_reason` text,
	`status` integer NOT NULL,
	`error_message` text,
	`upstream_id` text,
	`cancelled` integer DEFAULT false NOT NULL,
	`http_referer` text,
	`user_agent` text
);
--> statement-breakpoint
CREATE INDEX `generations_account_created` ON `generations` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `generations_model_provider` ON `generations` (`model`,`provider_name`,`created_at`);