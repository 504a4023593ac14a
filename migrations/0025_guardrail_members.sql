CREATE TABLE `guardrail_members` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`guardrail_id` text NOT NULL,
	`member_id` text NOT NULL,
	`assigned_by` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`guardrail_id`) REFERENCES `guardrails`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`member_id`) REFERENCES `members`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `guardrail_members_member` ON `guardrail_members` (`member_id`);--> statement-breakpoint
CREATE INDEX `guardrail_members_account` ON `guardrail_members` (`account_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `guardrail_members_pair` ON `guardrail_members` (`guardrail_id`,`member_id`);