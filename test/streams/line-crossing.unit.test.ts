import { describe, expect, it } from 'vitest'
import { DEAD_ZONE, follow, sideOf, type LineState, type Point } from '../../runtime/streams/line-crossing.ts'
import { counterProblem } from '../../runtime/streams/observers/passenger-flow.ts'

/** Walks a point along `path` across the line a → b and returns the crossings. */
function walk(a: Point, b: Point, path: Point[]): ('in' | 'out')[] {
  let state: LineState | undefined
  const crossings: ('in' | 'out')[] = []
  for (const p of path) {
    const step = follow(a, b, state, p)
    state = step.state
    if (step.crossing) crossings.push(step.crossing)
  }
  return crossings
}

describe('counter lines (README "Stream tasks", taskConfig.counters)', () => {
  // A vertical line drawn upwards: its right-hand side (looking from a to b, y down) is x > 0.5.
  const a = { x: 0.5, y: 1 }
  const b = { x: 0.5, y: 0 }

  it('tells the side, with a dead zone around the line', () => {
    expect(sideOf(a, b, { x: 0.9, y: 0.5 })).toBe(1)
    expect(sideOf(a, b, { x: 0.1, y: 0.5 })).toBe(-1)
    expect(sideOf(a, b, { x: 0.5 + DEAD_ZONE / 2, y: 0.5 })).toBe(0)
    // The same line drawn the other way swaps the sides.
    expect(sideOf(b, a, { x: 0.9, y: 0.5 })).toBe(-1)
  })

  it('counts left → right as in and right → left as out, once per crossing', () => {
    expect(walk(a, b, [{ x: 0.2, y: 0.5 }, { x: 0.4, y: 0.5 }, { x: 0.6, y: 0.5 }, { x: 0.8, y: 0.5 }])).toEqual(['in'])
    expect(walk(a, b, [{ x: 0.8, y: 0.4 }, { x: 0.2, y: 0.6 }])).toEqual(['out'])
    expect(walk(a, b, [{ x: 0.2, y: 0.5 }, { x: 0.8, y: 0.5 }, { x: 0.2, y: 0.5 }, { x: 0.8, y: 0.5 }])).toEqual(['in', 'out', 'in'])
  })

  it('does not count jitter on the line, nor the first sighting on either side', () => {
    const jitter = [0.47, 0.505, 0.495, 0.51, 0.49, 0.515].map((x) => ({ x, y: 0.5 }))
    expect(walk(a, b, jitter)).toEqual([])
    expect(walk(a, b, [{ x: 0.9, y: 0.5 }])).toEqual([])
    // Into the dead zone and back out on the same side: nothing.
    expect(walk(a, b, [{ x: 0.4, y: 0.5 }, { x: 0.5, y: 0.5 }, { x: 0.4, y: 0.5 }])).toEqual([])
  })

  it('counts only crossings through the segment, not past its ends', () => {
    const short = { from: { x: 0.5, y: 0.6 }, to: { x: 0.5, y: 0.4 } }
    expect(walk(short.from, short.to, [{ x: 0.2, y: 0.5 }, { x: 0.8, y: 0.5 }])).toEqual(['in'])
    expect(walk(short.from, short.to, [{ x: 0.2, y: 0.9 }, { x: 0.8, y: 0.9 }])).toEqual([])
  })

  it('refuses a counter line with one point twice or a repeated counterId', () => {
    const line = { from: { xRatio: 0.1, yRatio: 0.1 }, to: { xRatio: 0.9, yRatio: 0.1 } }
    expect(counterProblem({ counters: [{ counterId: 'door', ...line }] })).toBeNull()
    expect(counterProblem({ counters: [{ counterId: 'door', from: line.from, to: line.from }] })).toMatchObject({ field: '/taskConfig/counters/0/to' })
    expect(counterProblem({ counters: [{ counterId: 'door', ...line }, { counterId: 'door', ...line }] })).toMatchObject({ field: '/taskConfig/counters/1/counterId' })
  })
})
