DROP TABLE `login_attempts`;
--> statement-breakpoint
CREATE TABLE `login_throttle` (
	`account_name` text NOT NULL,
	`client` text NOT NULL,
	`failures` integer NOT NULL,
	`blocked_until` integer,
	`block_ms` integer,
	`last_failure_at` integer NOT NULL,
	PRIMARY KEY(`account_name`, `client`)
);
--> statement-breakpoint
CREATE INDEX `login_throttle_last_failure_idx` ON `login_throttle` (`last_failure_at`);