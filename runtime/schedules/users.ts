import { eq } from 'drizzle-orm'
import { alarmPolicies, streamTasks } from '../../shared/db/schema/index.ts'
import type { DbOrTx } from '../db/client.ts'
import type { ScheduleUsers } from '../../shared/schedules/types.ts'

/** The stream tasks and alarm policies that refer to a schedule. */
export async function scheduleUsers(db: DbOrTx, scheduleId: string): Promise<ScheduleUsers> {
  const tasks = await db.select({ taskId: streamTasks.taskId }).from(streamTasks).where(eq(streamTasks.scheduleId, scheduleId))
  const policies = await db.select({ policyId: alarmPolicies.policyId, policyName: alarmPolicies.policyName }).from(alarmPolicies).where(eq(alarmPolicies.scheduleId, scheduleId))
  return { taskIds: tasks.map((t) => t.taskId), policies }
}

/** `stream tasks a, b and alarm policies "x"`, for the refusal's text. */
export function usersMessage(users: ScheduleUsers): string {
  const parts = [
    users.taskIds.length ? `stream task${users.taskIds.length > 1 ? 's' : ''} ${users.taskIds.join(', ')}` : '',
    users.policies.length ? `alarm polic${users.policies.length > 1 ? 'ies' : 'y'} ${users.policies.map((p) => `"${p.policyName}"`).join(', ')}` : '',
  ]
  return parts.filter(Boolean).join(' and ')
}
