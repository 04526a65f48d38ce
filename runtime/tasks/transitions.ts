import { ApiError } from '../../shared/errors/index.ts'
import type { TaskRow } from '../../shared/tasks/types.ts'

/**
 * The image-analysis task's state machine (spec 3.2) as one declared table: for each event,
 * the states it may start from and the state it leads to. Only the task service
 * (runtime/tasks/service.ts) writes a task's state, and only a move this table allows; any
 * other move is refused with NotCreated (spec 3.2, 7.1).
 */
export type TaskState = TaskRow['state']
export type TaskEvent = 'create' | 'detect' | 'reconfigure' | 'cancel'
/** `none`: no task with that id. */
export type TaskFrom = TaskState | 'none'

export const TASK_TRANSITIONS: { readonly [E in TaskEvent]: Readonly<Partial<Record<TaskFrom, TaskState>>> } = {
  // PTaskCreate: a new task; a created one is reused (spec 3.2 row 2); a cancelled id is created again.
  create: { none: 'created', created: 'created', cancelled: 'created' },
  // PTaskDetectPic: only on a created task (spec 3.2 rows 3 and 5).
  detect: { created: 'created' },
  // A taskConfig change (docs/detection.md "Tasks"): only on a created task.
  reconfigure: { created: 'created' },
  // PTaskCancle: created → cancelled (spec 3.2 row 4); TaskBusy while a detection runs is the inference service's.
  cancel: { created: 'cancelled' },
}

/** The state `event` leads to from `from`; throws NotCreated (with `details`) when the table has no such move. */
export function nextTaskState(from: TaskFrom, event: TaskEvent, details: Record<string, unknown>): TaskState {
  const to = TASK_TRANSITIONS[event][from]
  if (to === undefined) throw new ApiError('NotCreated', { details })
  return to
}
