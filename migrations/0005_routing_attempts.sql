CREATE TABLE `endpoint_attempts` (
	`generation_id` text NOT NULL,
	`idx` integer NOT NULL,
	`model` text NOT NULL,
	`provider` text NOT NULL,
	`at` integer NOT NULL,
	`status` integer NOT NULL,
	`latency_ms` integer NOT NULL,
	`tokens_per_second` real,
	PRIMARY KEY(`generation_id`, `idx`)
);
--> statement-breakpoint
CREATE INDEX `endpoint_attempts_model_provider_at` ON `endpoint_attempts` (`model`,`provider`,`at`);--> statement-breakpoint
CREATE INDEX `endpoint_attempts_at` ON `endpoint_attempts` (`at`);--> statement-breakpoint
ALTER TABLE `generations` ADD `provider_responses` text;--> statement-breakpoint
ALTER TABLE `generations` ADD `strategy` text;