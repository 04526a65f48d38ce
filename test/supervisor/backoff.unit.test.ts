import { describe, expect, it } from 'vitest'
import { FIRST_RESTART_DELAY_MS, HEALTHY_RUN_MS, MAX_RESTART_DELAY_MS, restartDelay } from '../../runtime/supervisor/backoff.ts'

describe('supervisor restart delay', () => {
  it('doubles while the device crashes soon after starting, up to the maximum', () => {
    const waits: number[] = []
    let wait: number | null = null
    for (let crash = 0; crash < 7; crash++) waits.push((wait = restartDelay(wait, 2_000)))
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000])
    expect(Math.max(...waits)).toBe(MAX_RESTART_DELAY_MS)
  })

  it('starts afresh after a healthy run, however long the previous wait was', () => {
    expect(restartDelay(MAX_RESTART_DELAY_MS, HEALTHY_RUN_MS)).toBe(FIRST_RESTART_DELAY_MS)
    expect(restartDelay(MAX_RESTART_DELAY_MS, HEALTHY_RUN_MS - 1)).toBe(MAX_RESTART_DELAY_MS)
  })
})
