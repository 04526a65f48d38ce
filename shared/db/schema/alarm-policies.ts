import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import type { PolicyAction, PolicyConditions } from '../../alarms/types.ts'

/**
 * Linkage / alarm policies (spec 4.10 `/gtw/cwai/AlarmStrage/`): conditions on a stream task's
 * tracked objects → actions. Webhook secrets are kept in `actions` and never returned.
 */
export const alarmPolicies = sqliteTable('alarm_policies', {
  policyId: text('policy_id').primaryKey(),
  policyName: text('policy_name').notNull().unique(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  conditions: text('conditions', { mode: 'json' }).notNull().$type<PolicyConditions>(),
  scheduleId: text('schedule_id'),
  cooldownS: integer('cooldown_s').notNull(),
  actions: text('actions', { mode: 'json' }).notNull().$type<PolicyAction[]>(),
  createdBy: text('created_by'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [index('alarm_policies_schedule_idx').on(t.scheduleId)])
