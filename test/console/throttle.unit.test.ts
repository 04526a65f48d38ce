/**
 * The throttle of a fleet push's upload to each device (runtime/client/throttle.ts,
 * docs/deployment.md "Fleet view"): slices are handed out no faster than the rate, and the chunk
 * size keeps the gap between two chunks under a quarter of the device's upload idle timeout.
 */
import { describe, expect, it } from 'vitest'
import { throttled, throttledChunkSize } from '../../runtime/client/throttle.ts'

const source = (size: number) => ({ name: 'package.tar.gz', size, slice: (start: number, end: number) => new Blob([new Uint8Array(end - start)]) })

describe('fleet push throttle', () => {
  it('chunks hold one second of bytes, at most a quarter of the idle timeout, at least 1 KiB', () => {
    expect(throttledChunkSize(6_000_000, 1_800_000)).toBe(6_000_000)
    expect(throttledChunkSize(6_000_000, 3000)).toBe(4_500_000)
    expect(throttledChunkSize(6_000_000, 0)).toBe(6_000_000)
    expect(throttledChunkSize(100, 1_800_000)).toBe(1024)
  })

  it('hands slice n out once n chunks are due at the rate; a resumed earlier offset does not wait again', async () => {
    const rate = 20_000 // bytes per second: a 2,000-byte chunk is due every 100 ms
    const at: number[] = []
    const started = performance.now()
    const slow = throttled(source(10_000), rate)
    for (let start = 0; start < 10_000; start += 2000) {
      const blob = await slow.slice(start, start + 2000)
      expect(blob.size).toBe(2000)
      at.push(performance.now() - started)
    }
    // Chunk k is due at k × 100 ms (timers fire no earlier than asked, a little later on a loaded machine).
    at.forEach((ms, k) => expect(ms).toBeGreaterThanOrEqual(k * 100 - 2))
    expect(at[4]).toBeLessThan(400 + 300)
    // A resume from offset 2,000 after the end: already due, handed out at once.
    const before = performance.now()
    await slow.slice(2000, 4000)
    expect(performance.now() - before).toBeLessThan(50)
    expect(slow).toMatchObject({ name: 'package.tar.gz', size: 10_000 })
  })
})
