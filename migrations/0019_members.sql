CREATE TABLE `audit_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`at` integer NOT NULL,
	`actor_member_id` text,
	`actor_email` text,
	`via` text NOT NULL,
	`action` text NOT NULL,
	`target` text,
	`details` text
);
--> statement-breakpoint
CREATE INDEX `audit_events_account_at` ON `audit_events` (`account_id`,`at`);--> statement-breakpoint
CREATE INDEX `audit_events_at` ON `audit_events` (`at`);--> statement-breakpoint
CREATE TABLE `member_invites` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`account_id` text NOT NULL,
	`email` text NOT NULL,
	`role` text NOT NULL,
	`invited_by` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `member_invites_id_unique` ON `member_invites` (`id`);--> statement-breakpoint
CREATE INDEX `member_invites_account` ON `member_invites` (`account_id`);--> statement-breakpoint
CREATE TABLE `members` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`email` text NOT NULL,
	`role` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `members_email_unique` ON `members` (`email`);--> statement-breakpoint
CREATE INDEX `members_account` ON `members` (`account_id`);--> statement-breakpoint
-- Added by hand (drizzle-kit writes no data copy): every existing account gets one owner, with the account's email.
INSERT INTO `members`("id", "account_id", "email", "role", "created_at") SELECT 'mem_' || lower(hex(randomblob(12))), "id", "email", 'owner', "created_at" FROM `accounts`;--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_credentials` (
	`member_id` text PRIMARY KEY NOT NULL,
	`algorithm` text NOT NULL,
	`iterations` integer NOT NULL,
	`salt` text NOT NULL,
	`password_hash` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`member_id`) REFERENCES `members`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
-- Changed by hand: each account's password becomes its owner's.
INSERT INTO `__new_credentials`("member_id", "algorithm", "iterations", "salt", "password_hash", "updated_at") SELECT m."id", c."algorithm", c."iterations", c."salt", c."password_hash", c."updated_at" FROM `credentials` c JOIN `members` m ON m."account_id" = c."account_id";--> statement-breakpoint
DROP TABLE `credentials`;--> statement-breakpoint
ALTER TABLE `__new_credentials` RENAME TO `credentials`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `member_id` text;--> statement-breakpoint
CREATE INDEX `api_keys_member` ON `api_keys` (`member_id`);--> statement-breakpoint
ALTER TABLE `sessions` ADD `member_id` text REFERENCES members(id);--> statement-breakpoint
CREATE INDEX `sessions_member` ON `sessions` (`member_id`);--> statement-breakpoint
-- Added by hand: existing sessions and keys are the owner's.
UPDATE `sessions` SET `member_id` = (SELECT m.`id` FROM `members` m WHERE m.`account_id` = `sessions`.`account_id`);--> statement-breakpoint
UPDATE `api_keys` SET `member_id` = (SELECT m.`id` FROM `members` m WHERE m.`account_id` = `api_keys`.`account_id`);
