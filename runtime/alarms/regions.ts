import type { PolicyConditions } from '../../shared/alarms/types.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { DEFAULT_AREA } from '../../shared/inference/types.ts'
import type { StreamTaskStatus } from '../../shared/streams/types.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'

/** The areaIds a task's results carry: its taskConfig.regions, or the default area when it has none (runtime/sidecar/pipeline/result.ts). */
export function areaIdsOf(task: Pick<StreamTaskStatus, 'taskConfig'>): string[] {
  const regions = (task.taskConfig as TaskConfig).regions ?? []
  return regions.length > 0 ? regions.map((r) => r.areaId) : [DEFAULT_AREA.areaId]
}

/**
 * A policy's `areaId` must be a region of the tasks it watches (docs/alarms-and-schedules.md
 * "Alarm policies"): the task of `taskId`, else the tasks on `cameraId`, else any stream task.
 * Otherwise it could never fire: UnknownRegion names the region asked and the known ones.
 */
export function checkRegion({ taskId, cameraId, areaId }: PolicyConditions, tasks: StreamTaskStatus[]): void {
  if (areaId === undefined) return
  const watched = tasks.filter((t) => (taskId === undefined || t.taskId === taskId) && (cameraId === undefined || t.cameraId === cameraId))
  const known = [...new Set(watched.flatMap(areaIdsOf))]
  if (known.includes(areaId)) return
  const scope = taskId !== undefined ? `stream task ${taskId}` : cameraId !== undefined ? `the stream tasks of camera ${cameraId}` : 'any stream task'
  throw new ApiError('UnknownRegion', {
    details: { field: '/conditions/areaId', areaId, knownAreaIds: known, ...(taskId === undefined ? {} : { taskId }), ...(cameraId === undefined ? {} : { cameraId }) },
    msgText: known.length === 0
      ? `Region "${areaId}" is not defined by ${scope}: there is no stream task to watch; create one with this region first.`
      : `Region "${areaId}" is not defined by ${scope}; known regions: ${known.join(', ')}.`,
  })
}
