DROP INDEX `body_gallery_images_descriptor_idx`;--> statement-breakpoint
CREATE INDEX `body_gallery_images_descriptor_idx` ON `body_gallery_images` (libsql_vector_idx(`descriptor`, 'metric=cosine', 'compress_neighbors=float1bit', 'max_neighbors=32', 'search_l=400'));--> statement-breakpoint
DROP INDEX `gallery_faces_descriptor_idx`;--> statement-breakpoint
CREATE INDEX `gallery_faces_descriptor_idx` ON `gallery_faces` (libsql_vector_idx(`descriptor`, 'metric=cosine', 'compress_neighbors=float1bit', 'max_neighbors=32', 'search_l=400'));--> statement-breakpoint
DROP INDEX `things_gallery_images_descriptor_idx`;--> statement-breakpoint
CREATE INDEX `things_gallery_images_descriptor_idx` ON `things_gallery_images` (libsql_vector_idx(`descriptor`, 'metric=cosine', 'compress_neighbors=float1bit', 'max_neighbors=32', 'search_l=400'));