import { describe, expect, it } from 'vitest'
import { PromisedClips } from '../../runtime/recording/promised-clips.ts'

describe('clips promised to alarms before they are written (README "Recording", ClipNotReady)', () => {
  it('answers the wait until the clip should be written, at least 1 s, until it is written or given up on', () => {
    const promised = new PromisedClips()
    promised.promise('a', 10_000, 90_000)
    expect(promised.retryAfterSeconds('a', 0)).toBe(10)
    expect(promised.retryAfterSeconds('a', 8_500)).toBe(2)
    // Late: the clip is still awaited until its expiry, asked again every second.
    expect(promised.retryAfterSeconds('a', 30_000)).toBe(1)
    expect(promised.retryAfterSeconds('a', 90_000)).toBeNull()
    expect(promised.retryAfterSeconds('unknown', 0)).toBeNull()
    promised.settle('a')
    expect(promised.retryAfterSeconds('a', 0)).toBeNull()
  })

  it('forgets promises past their expiry', () => {
    const promised = new PromisedClips()
    promised.promise('old', 1_000, 5_000)
    promised.promise('new', 1_000, 50_000)
    promised.prune(5_000)
    expect([promised.retryAfterSeconds('old', 0), promised.retryAfterSeconds('new', 0)]).toEqual([null, 1])
  })
})
