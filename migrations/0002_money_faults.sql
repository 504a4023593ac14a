CREATE TABLE `test_card_charges` (
	`payment_id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`amount_nano` integer NOT NULL,
	`reference` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `api_keys` ADD `creation_token` text;--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_creation_token_unique` ON `api_keys` (`creation_token`);--> statement-breakpoint
ALTER TABLE `generations` ADD `usage_source` text;--> statement-breakpoint
ALTER TABLE `generations` ADD `insured` integer DEFAULT false NOT NULL;