CREATE TABLE `models` (
	`model_id` text PRIMARY KEY NOT NULL,
	`model_name` text NOT NULL,
	`source` text NOT NULL,
	`format` text NOT NULL,
	`location` text NOT NULL,
	`original_filename` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`sha256` text NOT NULL,
	`signature` text NOT NULL,
	`settings` text NOT NULL,
	`exportable` integer NOT NULL,
	`encrypted` integer NOT NULL,
	`device_bound` integer NOT NULL,
	`used_by` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
