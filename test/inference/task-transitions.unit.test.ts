import { describe } from 'vitest'
import { nextTaskState, TASK_TRANSITIONS, type TaskEvent, type TaskFrom, type TaskState } from '../../runtime/tasks/transitions.ts'
import { transitionTableSuite } from '../helpers/transition-suite.ts'

// spec 3.2, written out by hand: every (state, event) pair and where it leads; every other pair is NotCreated.
const EXPECTED: Record<TaskEvent, Partial<Record<TaskFrom, TaskState>>> = {
  create: { none: 'created', created: 'created', cancelled: 'created' },
  detect: { created: 'created' },
  reconfigure: { created: 'created' },
  cancel: { created: 'cancelled' },
}
const details = { taskId: 't1', algorithmCode: 'a' }

describe('image-analysis task transition table (spec 3.2)', () => {
  transitionTableSuite({
    table: TASK_TRANSITIONS, expected: EXPECTED, states: ['none', 'created', 'cancelled'],
    next: (from, event) => nextTaskState(from, event, details),
    refusal: () => ({ messageKey: 'api.error.NotCreated', details }),
  })
})
