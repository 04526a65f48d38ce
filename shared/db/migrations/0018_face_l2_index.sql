-- Face descriptors are compared by dlib's own measure, the Euclidean distance of the raw
-- descriptors (docs/galleries.md "Measure"): the face index becomes an l2 index (libsql keeps
-- 1-bit neighbours only for the cosine, so 8-bit ones). The rows keep their descriptors; those
-- of the previous descriptor version are described again at start ("Descriptor model changes").
-- drizzle-kit quotes the libsql_vector_idx expression as one column name: corrected by hand.
DROP INDEX `gallery_faces_descriptor_idx`;--> statement-breakpoint
CREATE INDEX `gallery_faces_descriptor_idx` ON `gallery_faces` (libsql_vector_idx(`descriptor`, 'metric=l2', 'compress_neighbors=float8', 'max_neighbors=32', 'search_l=200'));
