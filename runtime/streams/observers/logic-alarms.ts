import type { Logger } from '../../../shared/handler.ts'
import type { AlarmRaiser } from '../../alarms/raiser.ts'
import { trackNow } from '../event-writes.ts'
import type { StreamObserverFactory } from './types.ts'

export interface LogicAlarmDeps {
  log: Logger
  raiser: Pick<AlarmRaiser, 'raise'>
}

/** A tracked object whose target the pipeline's logic node answered true for (bLogicResult, spec 2.6) raises `alarm.raised` once. */
export const logicAlarms = (deps: LogicAlarmDeps): StreamObserverFactory => (row) => {
  const raised = new Set<string>()
  return {
    async onAnalysis({ frame, tracks, left, later }) {
      for (const track of left) raised.delete(track.id)
      for (const tracked of tracks) {
        if (tracked.target?.bLogicResult !== true || raised.has(tracked.id)) continue
        raised.add(tracked.id)
        const track = trackNow(tracked)
        await later(() => deps.raiser.raise({ alarmType: 'logic', policy: null, taskId: row.taskId, cameraId: row.cameraId, frame, objects: [track], dwellMs: track.lastSeen - track.firstSeen })
          .then(() => undefined, (error: Error) => deps.log.error({ taskId: row.taskId, objectId: track.id, err: error.message }, 'logic alarm not raised')))
      }
    },
  }
}
