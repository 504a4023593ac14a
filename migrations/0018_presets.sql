CREATE TABLE `preset_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`preset_id` text NOT NULL,
	`version` integer NOT NULL,
	`config` text NOT NULL,
	`system_prompt` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`preset_id`) REFERENCES `presets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `preset_versions_preset_version` ON `preset_versions` (`preset_id`,`version`);--> statement-breakpoint
CREATE TABLE `presets` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`latest_version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `presets_account_slug` ON `presets` (`account_id`,`slug`);--> statement-breakpoint
CREATE INDEX `presets_account_updated` ON `presets` (`account_id`,`updated_at`);--> statement-breakpoint
ALTER TABLE `generations` ADD `preset_id` text;--> statement-breakpoint
ALTER TABLE `generations` ADD `preset` text;--> statement-breakpoint
ALTER TABLE `generations` ADD `preset_version` integer;