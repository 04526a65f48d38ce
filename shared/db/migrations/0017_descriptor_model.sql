-- Descriptors versioned by model (docs/galleries.md "Descriptor model changes"). Body and things
-- images keep their descriptors, recorded as made by the image descriptor they were made with.
-- Face descriptors change length (FaceRes 1024 -> dlib ResNet-29 128): the faces keep their
-- pictures, and their descriptors wait (null) until the device describes them again at start.
-- drizzle-kit quotes the libsql_vector_idx expression as one column name: corrected by hand.
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_body_gallery_images` (
	`image_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`gallery_id` text NOT NULL,
	`item_id` text NOT NULL,
	`descriptor` F32_BLOB(600),
	`descriptor_model` text,
	`picture` blob NOT NULL,
	`source_sha256` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_body_gallery_images`("image_id", "gallery_id", "item_id", "descriptor", "descriptor_model", "picture", "source_sha256", "created_at") SELECT "image_id", "gallery_id", "item_id", "descriptor", 'build:image-descriptor#descriptor', "picture", "source_sha256", "created_at" FROM `body_gallery_images`;--> statement-breakpoint
DROP TABLE `body_gallery_images`;--> statement-breakpoint
ALTER TABLE `__new_body_gallery_images` RENAME TO `body_gallery_images`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `body_gallery_images_item_idx` ON `body_gallery_images` (`gallery_id`,`item_id`);--> statement-breakpoint
CREATE INDEX `body_gallery_images_descriptor_idx` ON `body_gallery_images` (libsql_vector_idx(`descriptor`, 'metric=cosine', 'compress_neighbors=float1bit', 'max_neighbors=32', 'search_l=400'));--> statement-breakpoint
CREATE TABLE `__new_gallery_faces` (
	`face_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`gallery_id` text NOT NULL,
	`person_id` text NOT NULL,
	`descriptor` F32_BLOB(128),
	`descriptor_model` text,
	`picture` blob NOT NULL,
	`source_sha256` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_gallery_faces`("face_id", "gallery_id", "person_id", "descriptor", "descriptor_model", "picture", "source_sha256", "created_at") SELECT "face_id", "gallery_id", "person_id", NULL, NULL, "picture", "source_sha256", "created_at" FROM `gallery_faces`;--> statement-breakpoint
DROP TABLE `gallery_faces`;--> statement-breakpoint
ALTER TABLE `__new_gallery_faces` RENAME TO `gallery_faces`;--> statement-breakpoint
CREATE INDEX `gallery_faces_person_idx` ON `gallery_faces` (`gallery_id`,`person_id`);--> statement-breakpoint
CREATE INDEX `gallery_faces_descriptor_idx` ON `gallery_faces` (libsql_vector_idx(`descriptor`, 'metric=cosine', 'compress_neighbors=float1bit', 'max_neighbors=32', 'search_l=400'));--> statement-breakpoint
CREATE TABLE `__new_things_gallery_images` (
	`image_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`gallery_id` text NOT NULL,
	`item_id` text NOT NULL,
	`descriptor` F32_BLOB(600),
	`descriptor_model` text,
	`picture` blob NOT NULL,
	`source_sha256` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_things_gallery_images`("image_id", "gallery_id", "item_id", "descriptor", "descriptor_model", "picture", "source_sha256", "created_at") SELECT "image_id", "gallery_id", "item_id", "descriptor", 'build:image-descriptor#descriptor', "picture", "source_sha256", "created_at" FROM `things_gallery_images`;--> statement-breakpoint
DROP TABLE `things_gallery_images`;--> statement-breakpoint
ALTER TABLE `__new_things_gallery_images` RENAME TO `things_gallery_images`;--> statement-breakpoint
CREATE INDEX `things_gallery_images_item_idx` ON `things_gallery_images` (`gallery_id`,`item_id`);--> statement-breakpoint
CREATE INDEX `things_gallery_images_descriptor_idx` ON `things_gallery_images` (libsql_vector_idx(`descriptor`, 'metric=cosine', 'compress_neighbors=float1bit', 'max_neighbors=32', 'search_l=400'));