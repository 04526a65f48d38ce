import { integer, sqliteTable, text, index, primaryKey } from 'drizzle-orm/sqlite-core'

/** Accounts. `passwordHash` is scrypt over the MD5 hex digest the client sends (spec 4.1), with its parameters (shared/auth/password.ts). */
export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  accountName: text('account_name').notNull().unique(),
  passwordHash: text('password_hash').notNull(),
  passwordChangeRequired: integer('password_change_required', { mode: 'boolean' }).notNull(),
  createdAt: integer('created_at').notNull(),
  passwordChangedAt: integer('password_changed_at'),
})

/** Sessions. Only the SHA-256 of an `mtk` is stored, never the token itself. */
export const sessions = sqliteTable('sessions', {
  id: text('id').primaryKey(),
  tokenHash: text('token_hash').notNull().unique(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  createdAt: integer('created_at').notNull(),
  lastSeenAt: integer('last_seen_at').notNull(),
  revokedAt: integer('revoked_at'),
}, (t) => [index('sessions_user_idx').on(t.userId)])

/**
 * The sign-in throttle (runtime/auth/login-throttle.ts): failed password checks per account name
 * and client (an address, an IPv6 /64, or `-` when unknown), kept whether or not the account
 * exists so that an unknown account and a wrong password behave the same. `blockedUntil` is
 * wall-clock time and survives a restart; `blockMs` is the block's length, which bounds what
 * remains of it when the clock has been stepped back.
 */
export const loginThrottle = sqliteTable('login_throttle', {
  accountName: text('account_name').notNull(),
  client: text('client').notNull(),
  failures: integer('failures').notNull(),
  blockedUntil: integer('blocked_until'),
  blockMs: integer('block_ms'),
  lastFailureAt: integer('last_failure_at').notNull(),
}, (t) => [primaryKey({ columns: [t.accountName, t.client] }), index('login_throttle_last_failure_idx').on(t.lastFailureAt)])
