ALTER TABLE `generations` ADD `tokens_cached` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `generations` ADD `tokens_cache_write` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `generations` ADD `cache_discount_nano` integer DEFAULT 0 NOT NULL;