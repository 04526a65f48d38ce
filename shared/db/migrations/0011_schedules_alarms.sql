CREATE TABLE `alarm_policies` (
	`policy_id` text PRIMARY KEY NOT NULL,
	`policy_name` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`conditions` text NOT NULL,
	`schedule_id` text,
	`cooldown_s` integer NOT NULL,
	`actions` text NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `alarm_policies_policy_name_unique` ON `alarm_policies` (`policy_name`);--> statement-breakpoint
CREATE INDEX `alarm_policies_schedule_idx` ON `alarm_policies` (`schedule_id`);--> statement-breakpoint
CREATE TABLE `schedules` (
	`schedule_id` text PRIMARY KEY NOT NULL,
	`schedule_name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`windows` text NOT NULL,
	`exceptions` text NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `schedules_schedule_name_unique` ON `schedules` (`schedule_name`);--> statement-breakpoint
ALTER TABLE `stream_tasks` ADD `schedule_id` text;