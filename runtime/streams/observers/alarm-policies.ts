import type { Logger } from '../../../shared/handler.ts'
import type { SchedulesService } from '../../../shared/schedules/types.ts'
import { PolicyEvaluator } from '../../alarms/engine.ts'
import type { AlarmRaiser } from '../../alarms/raiser.ts'
import type { PolicyRow } from '../../alarms/service.ts'
import { trackNow } from '../event-writes.ts'
import type { StreamObserverFactory } from './types.ts'

export interface AlarmObserverDeps {
  log: Logger
  policies: { forTask(taskId: string, cameraId: string): PolicyRow[] }
  schedules: Pick<SchedulesService, 'gate'>
  raiser: Pick<AlarmRaiser, 'raise'>
}

/**
 * Alarm policies over a task's tracked objects (spec 4.10 Linkage / alarm policy): the policies
 * are read on every analysed frame, so an edit or a switch applies from the next one.
 */
export const alarmPolicies = (deps: AlarmObserverDeps): StreamObserverFactory => (row) => {
  const evaluator = new PolicyEvaluator<PolicyRow>()
  // A policy whose schedule is gone fires always, as a task does.
  const open = (scheduleId: string) => deps.schedules.gate(scheduleId)?.active ?? true
  return {
    async onAnalysis({ frame, tracks, later }) {
      for (const alarm of evaluator.evaluate(deps.policies.forTask(row.taskId, row.cameraId), tracks, frame.at, open)) {
        const objects = alarm.objects.map(trackNow)
        await later(() => deps.raiser.raise({ alarmType: 'policy', policy: alarm.policy, taskId: row.taskId, cameraId: row.cameraId, frame, objects, dwellMs: alarm.dwellMs })
          .then(() => undefined, (error: Error) => deps.log.error({ taskId: row.taskId, policyId: alarm.policy.policyId, err: error.message }, 'alarm not raised')))
      }
    },
  }
}
