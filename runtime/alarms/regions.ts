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

/** The tasks a policy watches: the task of `taskId`, else the tasks on `cameraId`, else every stream task. */
const watchedBy = ({ taskId, cameraId }: Pick<PolicyConditions, 'taskId' | 'cameraId'>) =>
  (t: Pick<StreamTaskStatus, 'taskId' | 'cameraId'>) => (taskId === undefined || t.taskId === taskId) && (cameraId === undefined || t.cameraId === cameraId)

/** The regions the tasks a policy watches define, in the tasks' order. */
const knownAreaIds = (conditions: Pick<PolicyConditions, 'taskId' | 'cameraId'>, tasks: Pick<StreamTaskStatus, 'taskId' | 'cameraId' | 'taskConfig'>[]) =>
  [...new Set(tasks.filter(watchedBy(conditions)).flatMap(areaIdsOf))]

/**
 * A policy's `areaId` must be a region of the tasks it watches (docs/alarms-and-schedules.md
 * "Alarm policies"): the task of `taskId`, else the tasks on `cameraId`, else any stream task.
 * Otherwise it could never fire: UnknownRegion names the region asked and the known ones.
 */
export function checkRegion({ taskId, cameraId, areaId }: PolicyConditions, tasks: StreamTaskStatus[]): void {
  if (areaId === undefined) return
  const known = knownAreaIds({ taskId, cameraId }, tasks)
  if (known.includes(areaId)) return
  const scope = taskId !== undefined ? `stream task ${taskId}` : cameraId !== undefined ? `the stream tasks of camera ${cameraId}` : 'any stream task'
  throw new ApiError('UnknownRegion', {
    details: { field: '/conditions/areaId', areaId, knownAreaIds: known, ...(taskId === undefined ? {} : { taskId }), ...(cameraId === undefined ? {} : { cameraId }) },
    msgText: known.length === 0
      ? `Region "${areaId}" is not defined by ${scope}: there is no stream task to watch; create one with this region first.`
      : `Region "${areaId}" is not defined by ${scope}; known regions: ${known.join(', ')}.`,
  })
}

/** A policy that watches one region, as `regionsLeftUnwatched` reads it. */
export interface RegionPolicy {
  policyId: string
  policyName: string
  conditions: PolicyConditions
}

/**
 * The policies whose region no task they watch would define once stream task `taskId` has
 * `taskConfig` (Task/update): they could never fire again (docs/alarms-and-schedules.md "Alarm
 * policies"). A region another watched task still defines is not lost.
 */
export function regionsLeftUnwatched(policies: RegionPolicy[], tasks: StreamTaskStatus[], taskId: string, taskConfig: TaskConfig): RegionPolicy[] {
  const after = tasks.map((t) => (t.taskId === taskId ? { ...t, taskConfig } : t))
  return policies.filter(({ conditions }) => {
    const { areaId } = conditions
    return areaId !== undefined && knownAreaIds(conditions, tasks).includes(areaId) && !knownAreaIds(conditions, after).includes(areaId)
  })
}
