CREATE TABLE `recording_clip_events` (
	`clip_id` text NOT NULL,
	`event_id` integer,
	`event_kind` text NOT NULL,
	`promised_id` text
);
--> statement-breakpoint
CREATE INDEX `recording_clip_events_clip_idx` ON `recording_clip_events` (`clip_id`);--> statement-breakpoint
CREATE INDEX `recording_clip_events_event_idx` ON `recording_clip_events` (`event_id`);--> statement-breakpoint
CREATE INDEX `recording_clip_events_promised_idx` ON `recording_clip_events` (`promised_id`);