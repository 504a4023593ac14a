CREATE TABLE `guardrail_keys` (
	`guardrail_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`account_id` text NOT NULL,
	`id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`guardrail_id`, `key_hash`),
	FOREIGN KEY (`guardrail_id`) REFERENCES `guardrails`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`key_hash`) REFERENCES `api_keys`(`hash`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `guardrail_keys_id_unique` ON `guardrail_keys` (`id`);--> statement-breakpoint
CREATE INDEX `guardrail_keys_key` ON `guardrail_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `guardrail_keys_account` ON `guardrail_keys` (`account_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `guardrails` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`allowed_models` text,
	`ignored_models` text,
	`allowed_providers` text,
	`ignored_providers` text,
	`zdr_anthropic` integer DEFAULT false NOT NULL,
	`zdr_openai` integer DEFAULT false NOT NULL,
	`zdr_google` integer DEFAULT false NOT NULL,
	`zdr_xai` integer DEFAULT false NOT NULL,
	`zdr_other` integer DEFAULT false NOT NULL,
	`max_prompt_nano` integer,
	`max_completion_nano` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `guardrails_account` ON `guardrails` (`account_id`,`created_at`);