import { describe, expect, it } from 'vitest'
import { WriteGate } from '../../runtime/db/embedded/write-gate.ts'

describe('write gate (runtime/db/embedded/write-gate.ts)', () => {
  it('holds for one at a time, first come first served', async () => {
    const gate = new WriteGate()
    const order: string[] = []
    const release = await gate.hold()
    expect(gate.busy).toBe(true)
    const second = gate.run(async () => { order.push('second') })
    const third = gate.hold().then((end) => { order.push('third'); end() })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(order).toEqual([])
    release()
    await Promise.all([second, third])
    expect(order).toEqual(['second', 'third'])
    await new Promise((resolve) => setImmediate(resolve))
    expect(gate.busy).toBe(false)
  })

  it('runs a write that waited past its bound without the gate (SQLite then answers as it would), and the gate carries on', async () => {
    const gate = new WriteGate()
    const release = await gate.hold()
    const started = performance.now()
    // A write that waits for its own transaction: it must not wait forever.
    expect(await gate.run(async () => 'ran', 50)).toBe('ran')
    expect(performance.now() - started).toBeGreaterThanOrEqual(45)
    release()
    // Its turn came and went: the gate is free again.
    const again = await gate.hold(1_000)
    again()
    await new Promise((resolve) => setImmediate(resolve))
    expect(gate.busy).toBe(false)
  })
})
