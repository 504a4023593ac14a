ALTER TABLE `payments` ADD `reversal_read_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `payments` ADD `checked_at` integer;