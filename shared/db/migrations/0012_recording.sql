CREATE TABLE `recording_cameras` (
	`camera_id` text PRIMARY KEY NOT NULL,
	`mode` text NOT NULL,
	`pre_roll_seconds` integer NOT NULL,
	`post_roll_seconds` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `recording_clips` (
	`clip_id` text PRIMARY KEY NOT NULL,
	`camera_id` text NOT NULL,
	`kind` text NOT NULL,
	`event_id` integer,
	`event_kind` text,
	`task_id` text,
	`object_id` text,
	`start_time` integer NOT NULL,
	`end_time` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`bytes` integer NOT NULL,
	`file` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `recording_clips_start_idx` ON `recording_clips` (`start_time`);--> statement-breakpoint
CREATE INDEX `recording_clips_camera_start_idx` ON `recording_clips` (`camera_id`,`start_time`);--> statement-breakpoint
CREATE INDEX `recording_clips_event_idx` ON `recording_clips` (`event_id`);