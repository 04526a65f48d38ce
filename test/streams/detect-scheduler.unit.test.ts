import { describe, expect, it } from 'vitest'
import { DetectScheduler } from '../../runtime/streams/detect-scheduler.ts'

/** Lets every settled promise's callbacks run (no timers: counts, never wall-clock). */
const settle = async () => { for (let i = 0; i < 20; i++) await Promise.resolve() }

/**
 * `tasks` owners, each asking for its next turn as soon as its last one ended (as a stream
 * task with a frame always waiting does); the detections end one by one, oldest first, as
 * the test releases them. Returns who got each of the first `turns` turns, in order.
 */
async function serve(scheduler: DetectScheduler, tasks: string[], turns: number): Promise<string[]> {
  const order: string[] = []
  const running: (() => void)[] = []
  const ask = (owner: string) => {
    void scheduler.turn(owner).then((end) => {
      order.push(owner)
      running.push(() => { end(); if (order.length < turns) ask(owner) })
    })
  }
  for (const owner of tasks) ask(owner)
  await settle()
  while (order.length < turns) {
    running.shift()!()
    await settle()
  }
  return order.slice(0, turns)
}

describe('DetectScheduler', () => {
  it('runs at most `slots` detections at once; the others wait in line', async () => {
    const scheduler = new DetectScheduler(1)
    const first = await scheduler.turn('a')
    let second: (() => void) | null = null
    void scheduler.turn('b').then((end) => { second = end })
    await settle()
    expect(scheduler.running).toBe(1)
    expect(scheduler.waiting).toBe(1)
    expect(second).toBeNull()
    first()
    await settle()
    expect(second).not.toBeNull()
    expect(scheduler.running).toBe(1)
    expect(scheduler.waiting).toBe(0)
    second!()
    expect(scheduler.running).toBe(0)
  })

  it('ending a turn twice frees one slot only', async () => {
    const scheduler = new DetectScheduler(1)
    const end = await scheduler.turn('a')
    let granted = 0
    void scheduler.turn('b').then(() => { granted++ })
    void scheduler.turn('c').then(() => { granted++ })
    await settle()
    end()
    end()
    await settle()
    expect(granted).toBe(1)
    expect(scheduler.running).toBe(1)
    expect(scheduler.waiting).toBe(1)
  })

  it('serves 12 tasks that always have a frame in turn: every task gets the same number of turns', async () => {
    const tasks = Array.from({ length: 12 }, (_, i) => `task-${i + 1}`)
    const scheduler = new DetectScheduler(1)
    const order = await serve(scheduler, tasks, 120)
    for (const task of tasks) expect(order.filter((o) => o === task)).toHaveLength(10)
    // Round robin: each window of 12 turns holds every task once.
    for (let w = 0; w < 120; w += 12) expect(new Set(order.slice(w, w + 12)).size).toBe(12)
    expect(tasks.map((t) => scheduler.granted(t))).toEqual(new Array(12).fill(10))
  })

  it('with two slots, still round robin over 5 tasks', async () => {
    const tasks = ['a', 'b', 'c', 'd', 'e']
    const order = await serve(new DetectScheduler(2), tasks, 50)
    for (const task of tasks) expect(order.filter((o) => o === task)).toHaveLength(10)
  })

  it('slots 0 grants every turn at once (no limit: the previous behaviour)', async () => {
    const scheduler = new DetectScheduler(0)
    const ends = await Promise.all(['a', 'b', 'c', 'd'].map((o) => scheduler.turn(o)))
    expect(scheduler.running).toBe(4)
    expect(scheduler.waiting).toBe(0)
    for (const end of ends) end()
    expect(scheduler.running).toBe(0)
  })

  it('a waiter whose signal aborts leaves the line and never gets the slot', async () => {
    const scheduler = new DetectScheduler(1)
    const end = await scheduler.turn('a')
    const controller = new AbortController()
    const left = scheduler.turn('b', controller.signal)
    let third = false
    void scheduler.turn('c').then(() => { third = true })
    await settle()
    expect(scheduler.waiting).toBe(2)
    controller.abort(new Error('stream task stopped'))
    await expect(left).rejects.toThrow('stream task stopped')
    expect(scheduler.waiting).toBe(1)
    end()
    await settle()
    expect(third).toBe(true)
    expect(scheduler.granted('b')).toBe(0)
    expect(scheduler.granted('c')).toBe(1)
  })

  it('an already aborted signal is refused at once', async () => {
    const controller = new AbortController()
    controller.abort(new Error('gone'))
    await expect(new DetectScheduler(1).turn('a', controller.signal)).rejects.toThrow('gone')
  })

  it('refuses a negative or fractional slot count', () => {
    expect(() => new DetectScheduler(-1)).toThrow(RangeError)
    expect(() => new DetectScheduler(1.5)).toThrow(RangeError)
  })
})
