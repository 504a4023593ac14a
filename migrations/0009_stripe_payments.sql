CREATE TABLE `stripe_events` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`payment_id` text,
	`outcome` text NOT NULL,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `stripe_events_payment` ON `stripe_events` (`payment_id`);--> statement-breakpoint
ALTER TABLE `payments` ADD `fee_nano` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `payments` ADD `checkout_session` text;--> statement-breakpoint
ALTER TABLE `payments` ADD `refunded_nano` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `payments` ADD `disputed_nano` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `payments_checkout_session` ON `payments` (`checkout_session`);--> statement-breakpoint
CREATE INDEX `payments_reference` ON `payments` (`reference`);