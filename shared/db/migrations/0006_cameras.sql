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
