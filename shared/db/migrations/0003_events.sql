CREATE TABLE `event_cursors` (
	`channel` text PRIMARY KEY NOT NULL,
	`last_id` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`time` integer NOT NULL,
	`source` text NOT NULL,
	`payload` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_kind_time_idx` ON `events` (`kind`,`time`);--> statement-breakpoint
CREATE INDEX `events_time_idx` ON `events` (`time`);--> statement-breakpoint
CREATE INDEX `events_source_time_idx` ON `events` (`source`,`time`);--> statement-breakpoint
CREATE TABLE `system_settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `webhook_dead_letters` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`event_id` integer NOT NULL,
	`url` text NOT NULL,
	`attempts` integer NOT NULL,
	`last_error` text NOT NULL,
	`first_attempt_at` integer NOT NULL,
	`dead_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_dead_letters_dead_at_idx` ON `webhook_dead_letters` (`dead_at`);