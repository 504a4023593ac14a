CREATE TABLE `observability_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`destination_id` text NOT NULL,
	`at` integer NOT NULL,
	`spans` integer NOT NULL,
	`attempt` integer NOT NULL,
	`status` integer NOT NULL,
	`outcome` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `observability_deliveries_account` ON `observability_deliveries` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `observability_destinations` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`name` text NOT NULL,
	`enabled` integer NOT NULL,
	`endpoint` text NOT NULL,
	`encoding` text NOT NULL,
	`method` text NOT NULL,
	`signing_secret` text,
	`headers` text NOT NULL,
	`sampling_rate` real NOT NULL,
	`api_key_hashes` text,
	`privacy_mode` integer NOT NULL,
	`broadcast_cost` integer NOT NULL,
	`broadcast_identity` integer NOT NULL,
	`broadcast_request_context` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `observability_destinations_account` ON `observability_destinations` (`account_id`,`created_at`);