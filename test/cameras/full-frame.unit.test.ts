import { describe, expect, it } from 'vitest'
import { CameraChannel } from '../../runtime/cameras/channel.ts'
import { FullFrameUnavailable, nearestFullFrame } from '../../runtime/cameras/full-frame.ts'
import type { Frame, Reader, ReaderHandlers } from '../../runtime/cameras/reader.ts'
import { failure } from '../../runtime/cameras/reader.ts'

/** A camera's own reader driven by the test: frames at the camera's size (1920 × 1080) with the times it gives. */
class DrivenReader implements Reader {
  readonly pid = null
  constructor(readonly handlers: ReaderHandlers) {}
  start(): void {}
  async stop(): Promise<void> {}
  frame(time: number): Frame {
    const frame = { rgb: Buffer.alloc(3), width: 1920, height: 1080, source: { width: 1920, height: 1080 }, time }
    this.handlers.onFrame(frame)
    return frame
  }
}

async function channelWithReader(): Promise<{ channel: CameraChannel; reader: DrivenReader }> {
  let reader: DrivenReader | null = null
  const channel = new CameraChannel({
    openReader: async (handlers) => (reader = new DrivenReader(handlers)),
    onFrame: () => {}, onStatus: () => {}, reconnectMinMs: 60_000, reconnectMaxMs: 60_000,
  })
  channel.start()
  await new Promise((resolve) => setImmediate(resolve))
  return { channel, reader: reader! }
}

/** The camera's reader at 1 fps (period 1000 ms), a bound of 700 ms. */
const timing = (now: () => number) => ({ maxSkewMs: 700, periodMs: 1000, now })
const reasonOf = (promise: Promise<unknown>) => promise.then(() => null, (error: unknown) => (error instanceof FullFrameUnavailable ? error.reason : `not a fallback: ${String(error)}`))

describe('the camera\'s frame at its own size nearest an analysed frame (docs/cameras-and-stream-tasks.md "Snapshots")', () => {
  it('takes the latest frame when the next one, a period later, cannot be nearer; no wait', async () => {
    const { channel, reader } = await channelWithReader()
    const latest = reader.frame(10_000)
    // Analysed at 10 300: the latest is 300 ms away, the next expected at 11 000 is 700 away.
    const started = Date.now()
    expect(await nearestFullFrame(channel, 10_300, timing(() => 10_450))).toBe(latest)
    expect(Date.now() - started).toBeLessThan(50)
    // A frame decoded after the analysed one is taken when within the bound.
    expect(await nearestFullFrame(channel, 9_500, timing(() => 10_450))).toBe(latest)
    await channel.stop()
  })

  it('waits for the next frame when it can be nearer, and takes the nearer of the two', async () => {
    const { channel, reader } = await channelWithReader()
    reader.frame(10_000)
    // Analysed at 10 800: the next frame (expected 11 000) can be nearer than the latest (800 ms, beyond the bound too).
    const nearest = nearestFullFrame(channel, 10_800, { maxSkewMs: 700, periodMs: 1000, now: () => 10_800 })
    await new Promise((resolve) => setTimeout(resolve, 20))
    const next = reader.frame(11_010)
    expect(await nearest).toBe(next)
    await channel.stop()
  })

  it('is too late when no frame comes within the bound: the reason names the distance and the setting', async () => {
    const { channel, reader } = await channelWithReader()
    reader.frame(10_000)
    // The latest is 900 ms away; the wait ends at 10 900 + 700 (clock at 11 590: 10 ms to wait), and no frame comes.
    const reason = await reasonOf(nearestFullFrame(channel, 10_900, { maxSkewMs: 700, periodMs: 1000, now: () => 11_590 }))
    expect(reason).toBe('too late: the nearest frame at the camera\'s size is 900 ms from the analysed frame (SNAPSHOT_MAX_SKEW_MS 700)')
    // A frame far after the analysed one: a later one would be further still.
    reader.frame(12_000)
    expect(await reasonOf(nearestFullFrame(channel, 10_900, timing(() => 12_000))))
      .toBe('too late: the nearest frame at the camera\'s size is 1100 ms from the analysed frame (SNAPSHOT_MAX_SKEW_MS 700)')
    await channel.stop()
  })

  it('has nothing while the camera\'s reader has no frame, or fails during the wait', async () => {
    const { channel, reader } = await channelWithReader()
    expect(await reasonOf(nearestFullFrame(channel, 10_000, timing(() => 10_000)))).toBe('the camera\'s own reader has no frame (connecting)')
    reader.frame(10_000)
    const waiting = reasonOf(nearestFullFrame(channel, 10_900, { maxSkewMs: 700, periodMs: 1000, now: () => 10_900 }))
    reader.handlers.onFailure(failure('CameraSourceFailed', 'no frame for 4000 ms'))
    // The wait ends at the failure (not at its bound), with the latest frame too far.
    expect(await waiting).toBe('too late: the nearest frame at the camera\'s size is 900 ms from the analysed frame (SNAPSHOT_MAX_SKEW_MS 700)')
    expect(await reasonOf(nearestFullFrame(channel, 10_000, timing(() => 10_000)))).toBe('the camera\'s own reader has no frame (offline)')
    await channel.stop()
  })
})
