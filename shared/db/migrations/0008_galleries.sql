CREATE TABLE `face_galleries` (
	`gallery_id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `gallery_faces` (
	`face_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`gallery_id` text NOT NULL,
	`person_id` text NOT NULL,
	`descriptor` F32_BLOB(1024) NOT NULL,
	`picture` blob NOT NULL,
	`source_sha256` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `gallery_faces_person_idx` ON `gallery_faces` (`gallery_id`,`person_id`);--> statement-breakpoint
CREATE INDEX `gallery_faces_descriptor_idx` ON `gallery_faces` (libsql_vector_idx(`descriptor`, 'metric=cosine', 'compress_neighbors=float1bit', 'max_neighbors=32'));--> statement-breakpoint
CREATE TABLE `gallery_import_jobs` (
	`job_id` text PRIMARY KEY NOT NULL,
	`gallery_id` text NOT NULL,
	`state` text NOT NULL,
	`total` integer NOT NULL,
	`processed` integer NOT NULL,
	`imported` integer NOT NULL,
	`skipped` integer NOT NULL,
	`failed` integer NOT NULL,
	`errors` text NOT NULL,
	`error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `gallery_persons` (
	`gallery_id` text NOT NULL,
	`person_id` text NOT NULL,
	`name` text NOT NULL,
	`attributes` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`gallery_id`, `person_id`)
);
