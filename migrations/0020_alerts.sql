CREATE TABLE `alert_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`url` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`attempt` integer NOT NULL,
	`outcome` text NOT NULL,
	`status` integer,
	`error` text,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `alert_deliveries_account` ON `alert_deliveries` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `alert_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`url` text NOT NULL,
	`secret_sealed` text NOT NULL,
	`secret_hint` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `alert_endpoints_account` ON `alert_endpoints` (`account_id`);