CREATE TABLE `body_galleries` (
	`gallery_id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `body_gallery_images` (
	`image_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`gallery_id` text NOT NULL,
	`item_id` text NOT NULL,
	`descriptor` F32_BLOB(600) NOT NULL,
	`picture` blob NOT NULL,
	`source_sha256` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `body_gallery_images_item_idx` ON `body_gallery_images` (`gallery_id`,`item_id`);--> statement-breakpoint
CREATE INDEX `body_gallery_images_descriptor_idx` ON `body_gallery_images` (libsql_vector_idx(`descriptor`, 'metric=cosine', 'compress_neighbors=float1bit', 'max_neighbors=32', 'search_l=400'));--> statement-breakpoint
CREATE TABLE `body_gallery_items` (
	`gallery_id` text NOT NULL,
	`item_id` text NOT NULL,
	`name` text NOT NULL,
	`attributes` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`gallery_id`, `item_id`)
);
--> statement-breakpoint
CREATE TABLE `things_galleries` (
	`gallery_id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `things_gallery_images` (
	`image_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`gallery_id` text NOT NULL,
	`item_id` text NOT NULL,
	`descriptor` F32_BLOB(600) NOT NULL,
	`picture` blob NOT NULL,
	`source_sha256` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `things_gallery_images_item_idx` ON `things_gallery_images` (`gallery_id`,`item_id`);--> statement-breakpoint
CREATE INDEX `things_gallery_images_descriptor_idx` ON `things_gallery_images` (libsql_vector_idx(`descriptor`, 'metric=cosine', 'compress_neighbors=float1bit', 'max_neighbors=32', 'search_l=400'));--> statement-breakpoint
CREATE TABLE `things_gallery_items` (
	`gallery_id` text NOT NULL,
	`item_id` text NOT NULL,
	`name` text NOT NULL,
	`attributes` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`gallery_id`, `item_id`)
);
--> statement-breakpoint
DROP INDEX `gallery_faces_descriptor_idx`;--> statement-breakpoint
CREATE INDEX `gallery_faces_descriptor_idx` ON `gallery_faces` (libsql_vector_idx(`descriptor`, 'metric=cosine', 'compress_neighbors=float1bit', 'max_neighbors=32', 'search_l=400'));