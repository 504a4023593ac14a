CREATE TABLE `byok_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`provider` text NOT NULL,
	`name` text,
	`ciphertext` text NOT NULL,
	`iv` text NOT NULL,
	`key_version` integer NOT NULL,
	`last4` text NOT NULL,
	`mode` text DEFAULT 'first' NOT NULL,
	`allow_fallback` integer DEFAULT false NOT NULL,
	`disabled` integer DEFAULT false NOT NULL,
	`last_error` text,
	`last_error_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `byok_keys_account_provider` ON `byok_keys` (`account_id`,`provider`);--> statement-breakpoint
CREATE INDEX `byok_keys_account` ON `byok_keys` (`account_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `generations` ADD `byok` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `generations` ADD `byok_upstream_nano` integer;