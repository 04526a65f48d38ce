import { describe, expect, it } from 'vitest'
import { MemoryBudget, MemoryBudgetError, type MemoryBudgetOptions, type Reservation } from '../../runtime/sidecar/image/memory-budget.ts'

const budget = (options: Partial<MemoryBudgetOptions> = {}) =>
  new MemoryBudget({ capacityBytes: 100, maxWaiting: 8, maxWaitMs: 60_000, available: () => Number.MAX_SAFE_INTEGER, ...options })

const refusal = async (p: Promise<unknown>): Promise<MemoryBudgetError> => {
  try { await p } catch (error) { if (error instanceof MemoryBudgetError) return error; throw error }
  throw new Error('expected a MemoryBudgetError')
}

/** Lets queued admissions (scheduled with setImmediate after a release) happen. */
const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('decode memory admission (spec 4.11)', () => {
  it('admits up to the budget at once and the rest first come, first served as memory is released', async () => {
    const memory = budget()
    const admitted: string[] = []
    const take = (name: string, bytes: number) => memory.acquire(bytes).then((r) => { admitted.push(name); return r })
    const a = await take('a', 60)
    const b = await take('b', 40)
    // The large head waits for 70 bytes; the small ones behind it do not overtake it.
    const c = take('c', 70)
    const d = take('d', 10)
    const e = take('e', 20)
    await settle()
    expect(admitted).toEqual(['a', 'b'])
    expect(memory.stats()).toEqual({ budgetBytes: 100, inUseBytes: 100, waiting: 3 })
    b.release()
    await settle()
    expect(admitted).toEqual(['a', 'b'])
    a.release()
    await settle()
    expect(admitted).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(memory.stats()).toEqual({ budgetBytes: 100, inUseBytes: 100, waiting: 0 })
    for (const r of await Promise.all([c, d, e])) r.release()
    await settle()
    expect(memory.stats().inUseBytes).toBe(0)
  })

  it('bounds the queue: one more waiting request is refused at once, retryably', async () => {
    const memory = budget({ maxWaiting: 2 })
    const held = await memory.acquire(100)
    const waiting = [memory.acquire(50), memory.acquire(50)]
    const refused = await refusal(memory.acquire(1))
    expect(refused.reason).toBe('queue-full')
    expect(refused.details).toEqual({ requiredBytes: 1, budgetBytes: 100, inUseBytes: 100, waiting: 2 })
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1)
    held.release()
    for (const r of await Promise.all(waiting)) r.release()
  })

  it('refuses at once what exceeds the whole budget', async () => {
    const refused = await refusal(budget().acquire(101))
    expect(refused.reason).toBe('exceeds-capacity')
  })

  it('ends a wait at maxWaitMs, or sooner at the request deadline, and then admits the next in line', async () => {
    const memory = budget({ maxWaitMs: 30 })
    const held = await memory.acquire(80)
    const timedOut = refusal(memory.acquire(50))
    const next = memory.acquire(20, { deadline: performance.now() + 60_000 })
    expect((await timedOut).reason).toBe('timed-out')
    // The head gave up: the small request behind it fits and is admitted without a release.
    const admitted = await next
    expect(memory.stats()).toEqual({ budgetBytes: 100, inUseBytes: 100, waiting: 0 })
    admitted.release()

    // The deadline is sooner than maxWaitMs (which would outlast the test's timeout).
    const patient = budget({ maxWaitMs: 10 * 60_000 })
    const full = await patient.acquire(100)
    const late = await refusal(patient.acquire(10, { deadline: performance.now() + 30 }))
    expect(late.reason).toBe('timed-out')
    expect(patient.stats().waiting).toBe(0)
    full.release()
    held.release()
  })

  it('stops waiting when the caller goes away', async () => {
    const memory = budget()
    const held = await memory.acquire(100)
    const controller = new AbortController()
    const waiting = refusal(memory.acquire(10, { signal: controller.signal }))
    controller.abort()
    expect((await waiting).reason).toBe('aborted')
    expect(memory.stats()).toEqual({ budgetBytes: 100, inUseBytes: 100, waiting: 0 })
    expect((await refusal(memory.acquire(10, { signal: controller.signal }))).reason).toBe('aborted')
    held.release()
  })

  it('frees a reservation once whatever happened to the work, and reclaims before admitting waiters', async () => {
    const events: string[] = []
    const memory = budget({ reclaim: (released) => events.push(`reclaim ${released}`) })
    const work = async (r: Reservation) => {
      try { throw new Error('decode failed') } finally { r.release() }
    }
    const first = await memory.acquire(100)
    const waiter = memory.acquire(100).then((r) => { events.push('admitted'); return r })
    await expect(work(first)).rejects.toThrow('decode failed')
    first.release() // a second release changes nothing
    const second = await waiter
    expect(events).toEqual(['reclaim 100', 'admitted'])
    expect(memory.stats().inUseBytes).toBe(100)
    second.release()
    await settle()
    expect(memory.stats().inUseBytes).toBe(0)
  })

  it('also waits for the memory the machine has now, and admits when it returns', async () => {
    let available = 1000
    const memory = budget({ capacityBytes: 1000, available: () => available })
    const held = await memory.acquire(300)
    available = 500 // another process took memory: 300 held + 300 more does not fit
    const waiting = memory.acquire(300)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(memory.stats().waiting).toBe(1)
    available = 1000
    const admitted = await waiting // the budget asks the machine again while work waits
    expect(memory.stats()).toEqual({ budgetBytes: 1000, inUseBytes: 600, waiting: 0 })
    admitted.release()
    held.release()
  })
})
