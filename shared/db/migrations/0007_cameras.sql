CREATE TABLE `cameras` (
	`camera_id` text PRIMARY KEY NOT NULL,
	`camera_name` text NOT NULL,
	`source_type` text NOT NULL,
	`url` text,
	`username` text,
	`password` text,
	`device` text,
	`video_file` text,
	`video_name` text,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `stream_tasks` (
	`task_id` text PRIMARY KEY NOT NULL,
	`algorithm_code` text NOT NULL,
	`camera_id` text NOT NULL,
	`target_fps` real NOT NULL,
	`task_config` text NOT NULL,
	`motion_gating` integer NOT NULL,
	`min_detect_interval_ms` integer NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
