CREATE TABLE `audio_columns` (
	`column_id` text PRIMARY KEY NOT NULL,
	`column_name` text NOT NULL,
	`protocol` text NOT NULL,
	`url` text NOT NULL,
	`method` text NOT NULL,
	`format` text NOT NULL,
	`username` text,
	`password` text,
	`timeout_ms` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `audio_files` (
	`audio_id` text PRIMARY KEY NOT NULL,
	`audio_name` text NOT NULL,
	`original_name` text NOT NULL,
	`source_format` text NOT NULL,
	`duration_ms` integer NOT NULL,
	`sample_rate` integer NOT NULL,
	`channels` integer NOT NULL,
	`size_bytes` integer NOT NULL,
	`input_loudness` real,
	`file` text NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL
);
