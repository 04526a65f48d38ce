CREATE TABLE `algorithms` (
	`algorithm_id` text PRIMARY KEY NOT NULL,
	`algorithm_name` text NOT NULL,
	`algorithm_usage` text NOT NULL,
	`algorithm_category` text NOT NULL,
	`supplier` text NOT NULL,
	`version` text NOT NULL,
	`description` text NOT NULL,
	`models` text NOT NULL,
	`running_status` integer DEFAULT 0 NOT NULL,
	`source` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `tasks` (
	`task_id` text PRIMARY KEY NOT NULL,
	`algorithm_code` text NOT NULL,
	`task_config` text NOT NULL,
	`state` text NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `tasks_state_idx` ON `tasks` (`state`);