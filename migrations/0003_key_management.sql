ALTER TABLE `api_keys` ADD `limit_reset` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `include_byok_in_limit` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `expires_at` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `is_management` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `updated_at` integer;