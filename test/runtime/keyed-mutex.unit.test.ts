import { describe, expect, it } from 'vitest'
import { KeyedMutex, Mutex } from '../../runtime/keyed-mutex.ts'

/** A step that finishes when the test says so. */
function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { open, opened }
}

describe('KeyedMutex: one step at a time per key (docs/architecture.md "State machines and locks")', () => {
  it('runs steps of one key in the order they were queued, each after the previous one settled', async () => {
    const mutex = new KeyedMutex()
    const log: string[] = []
    const first = gate()
    const a = mutex.run('k', async () => { log.push('a start'); await first.opened; log.push('a end'); return 'a' })
    const b = mutex.run('k', async () => { log.push('b'); return 'b' })
    const c = mutex.run('k', async () => { log.push('c'); return 'c' })
    await Promise.resolve()
    expect(log).toEqual(['a start'])
    first.open()
    expect(await Promise.all([a, b, c])).toEqual(['a', 'b', 'c'])
    expect(log).toEqual(['a start', 'a end', 'b', 'c'])
  })

  it('runs steps of different keys concurrently', async () => {
    const mutex = new KeyedMutex()
    const held = gate()
    const log: string[] = []
    const a = mutex.run('one', async () => { await held.opened; log.push('one') })
    await mutex.run('two', async () => { log.push('two') })
    expect(log).toEqual(['two'])
    held.open()
    await a
    expect(log).toEqual(['two', 'one'])
  })

  it('a failed step rejects only its own caller; the next step still runs', async () => {
    const mutex = new KeyedMutex()
    const failing = mutex.run('k', async () => { throw new Error('boom') })
    const next = mutex.run('k', async () => 42)
    await expect(failing).rejects.toThrow('boom')
    expect(await next).toBe(42)
  })

  it('forgets a key once nothing is queued behind its last step', async () => {
    const mutex = new KeyedMutex()
    const held = gate()
    const running = mutex.run('task-1', () => held.opened)
    expect(mutex.busy('task-1')).toBe(true)
    held.open()
    await running
    await new Promise((resolve) => setImmediate(resolve))
    expect(mutex.busy('task-1')).toBe(false)
  })
})

describe('Mutex: a KeyedMutex of a single key', () => {
  it('runs everything in order, failures included, one at a time', async () => {
    const mutex = new Mutex()
    let running = 0
    let most = 0
    const order: number[] = []
    const step = (n: number, fail = false) => mutex.run(async () => {
      running++
      most = Math.max(most, running)
      await new Promise((resolve) => setImmediate(resolve))
      order.push(n)
      running--
      if (fail) throw new Error(`step ${n}`)
      return n
    })
    const results = await Promise.allSettled([step(1), step(2, true), step(3)])
    expect(order).toEqual([1, 2, 3])
    expect(most).toBe(1)
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('step 2')
  })
})
