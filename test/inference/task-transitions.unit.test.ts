import { describe, expect, it } from 'vitest'
import { nextTaskState, TASK_TRANSITIONS, type TaskEvent, type TaskFrom, type TaskState } from '../../runtime/tasks/transitions.ts'

// spec 3.2, written out by hand: every (state, event) pair and where it leads; every other pair is NotCreated.
const STATES: TaskFrom[] = ['none', 'created', 'cancelled']
const EXPECTED: Record<TaskEvent, Partial<Record<TaskFrom, TaskState>>> = {
  create: { none: 'created', created: 'created', cancelled: 'created' },
  detect: { created: 'created' },
  reconfigure: { created: 'created' },
  cancel: { created: 'cancelled' },
}

describe('image-analysis task transition table (spec 3.2)', () => {
  it('declares exactly the moves of spec 3.2', () => {
    expect(TASK_TRANSITIONS).toEqual(EXPECTED)
  })

  for (const event of Object.keys(EXPECTED) as TaskEvent[]) {
    for (const from of STATES) {
      const to = EXPECTED[event][from]
      if (to !== undefined) {
        it(`${from} --${event}--> ${to}`, () => {
          expect(nextTaskState(from, event, { taskId: 't1' })).toBe(to)
        })
      } else {
        it(`${from} --${event}--> refused with api.error.NotCreated`, () => {
          let thrown: unknown
          try { nextTaskState(from, event, { taskId: 't1', algorithmCode: 'a' }) } catch (error) { thrown = error }
          expect(thrown).toMatchObject({ item: { messageKey: 'api.error.NotCreated', details: { taskId: 't1', algorithmCode: 'a' } } })
        })
      }
    }
  }
})
