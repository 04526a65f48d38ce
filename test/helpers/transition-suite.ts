import { expect, it } from 'vitest'

/**
 * The shared suite of a declared transition table (docs/architecture.md "State machines and locks"):
 * the table is exactly the one the spec describes (written out by hand in the test), every
 * (state, event) pair it allows leads where the spec says, and every other pair is refused
 * with the error the spec names, `details` included. Call it inside the table's `describe`.
 */
export function transitionTableSuite<From extends string, Event extends string, To extends string>(suite: {
  table: unknown
  expected: Record<Event, Partial<Record<From, To>>>
  states: readonly From[]
  /** Applies `event` in `from`: the state it leads to, or throws the refusal. */
  next: (from: From, event: Event) => To
  /** The refusal's error item for a pair the table has no move for. */
  refusal: (from: From, event: Event) => { messageKey: string; details: Record<string, unknown> }
  /** Further checks of an allowed move. */
  allowed?: (from: From, event: Event) => void
}): void {
  it('declares exactly the moves of the spec', () => {
    expect(suite.table).toEqual(suite.expected)
  })

  for (const event of Object.keys(suite.expected) as Event[]) {
    for (const from of suite.states) {
      const to = suite.expected[event][from]
      if (to !== undefined) {
        it(`${from} --${event}--> ${to}`, () => {
          expect(suite.next(from, event)).toBe(to)
          suite.allowed?.(from, event)
        })
      } else {
        const item = suite.refusal(from, event)
        it(`${from} --${event}--> refused with ${item.messageKey}`, () => {
          let thrown: unknown
          try { suite.next(from, event) } catch (error) { thrown = error }
          expect(thrown).toMatchObject({ item })
        })
      }
    }
  }
}
