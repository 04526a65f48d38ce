CREATE TABLE `removed_preset_algorithms` (
	`algorithm_id` text PRIMARY KEY NOT NULL,
	`removed_at` integer NOT NULL
);
