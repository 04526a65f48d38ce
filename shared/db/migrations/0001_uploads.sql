CREATE TABLE `upload_chunks` (
	`upload_id` text NOT NULL,
	`chunk_index` integer NOT NULL,
	`offset` integer NOT NULL,
	`size` integer NOT NULL,
	PRIMARY KEY(`upload_id`, `chunk_index`),
	FOREIGN KEY (`upload_id`) REFERENCES `upload_sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `upload_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`source` text NOT NULL,
	`client_request_id` text,
	`filename_json` text NOT NULL,
	`purpose` text NOT NULL,
	`total_chunks` integer NOT NULL,
	`total_size` integer NOT NULL,
	`sha256` text,
	`state` text NOT NULL,
	`next_chunk_index` integer NOT NULL,
	`received_bytes` integer NOT NULL,
	`metadata_bytes` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_activity_at` integer NOT NULL,
	`ended_at` integer,
	`end_reason` text,
	`bytes_deleted_at` integer
);
--> statement-breakpoint
CREATE INDEX `upload_sessions_user_request_idx` ON `upload_sessions` (`user_id`,`client_request_id`);--> statement-breakpoint
CREATE INDEX `upload_sessions_state_idx` ON `upload_sessions` (`state`);