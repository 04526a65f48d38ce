import { describe, expect, it } from 'vitest'
import { CameraChannel } from '../../runtime/cameras/channel.ts'
import { FullFrameUnavailable, fullFrameAfter, SAME_MOMENT_MS } from '../../runtime/cameras/full-frame.ts'
import type { Frame, Reader, ReaderHandlers } from '../../runtime/cameras/reader.ts'
import { failure } from '../../runtime/cameras/reader.ts'

/** A camera's own reader driven by the test: frames at the camera's size (1920 × 1080) with the times it gives; records its burst commands. */
class DrivenReader implements Reader {
  readonly pid = null
  readonly bursts: boolean[] = []
  constructor(readonly handlers: ReaderHandlers) {}
  start(): void {}
  async stop(): Promise<void> {}
  burst(on: boolean): boolean {
    this.bursts.push(on)
    return true
  }

  frame(pts: number, time = pts + 30): Frame {
    const frame = { rgb: Buffer.alloc(3), width: 1920, height: 1080, source: { width: 1920, height: 1080 }, time, at: time, pts }
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

/** An analysed frame (512 × 288 of the 1920 × 1080 camera) received at `pts`, decoded 20 ms later (the monotonic clock reads the same here). */
const analysedAt = (pts: number): Frame => ({ rgb: Buffer.alloc(3), width: 512, height: 288, source: { width: 1920, height: 1080 }, time: pts + 20, at: pts + 20, pts })
const timing = (now: () => number) => ({ maxSkewMs: 700, now })
const reasonOf = (promise: Promise<unknown>) => promise.then(() => null, (error: unknown) => (error instanceof FullFrameUnavailable ? error.reason : `not a fallback: ${String(error)}`))
const tick = () => new Promise((resolve) => setTimeout(resolve, 10))

describe('the camera\'s first frame at its own size at or after an analysed frame (docs/cameras-and-stream-tasks.md "Snapshots")', () => {
  it('takes the latest frame when it is at or after the analysed one (or the same moment), with no wait and no burst', async () => {
    const { channel, reader } = await channelWithReader()
    const latest = reader.frame(10_000)
    expect(await fullFrameAfter(channel, analysedAt(9_800), timing(() => 10_050))).toEqual({ frame: latest, skewMs: 200 })
    // The same frame received by both readers a few ms apart: the same moment.
    expect(await fullFrameAfter(channel, analysedAt(10_000 + SAME_MOMENT_MS), timing(() => 10_050))).toEqual({ frame: latest, skewMs: -SAME_MOMENT_MS })
    expect(reader.bursts).toEqual([])
    await channel.stop()
  })

  it('never takes an earlier frame: waits for the next ones at the burst rate, skipping those still before, then back to the usual rate', async () => {
    const { channel, reader } = await channelWithReader()
    reader.frame(10_000)
    // Analysed at 10 300: the latest (300 ms before) would be a moment when the object may not be in view yet.
    const found = fullFrameAfter(channel, analysedAt(10_300), timing(() => 10_400))
    await tick()
    expect(reader.bursts).toEqual([true])
    reader.frame(10_300 - SAME_MOMENT_MS - 1)
    await tick()
    const next = reader.frame(10_390)
    expect(await found).toEqual({ frame: next, skewMs: 90 })
    expect(reader.bursts).toEqual([true, false])
    await channel.stop()
  })

  it('takes the first of the reader\'s last frames at or after the analysed one (armed at the burst rate: the very frame analysed), not the latest', async () => {
    const { channel, reader } = await channelWithReader()
    channel.arm(1000)
    expect(reader.bursts).toEqual([true])
    reader.frame(10_000)
    const same = reader.frame(10_103)
    reader.frame(10_200)
    reader.frame(10_300)
    // The analysed frame received at 10 100: the camera's reader received it 3 ms later.
    expect(await fullFrameAfter(channel, analysedAt(10_100), timing(() => 10_400))).toEqual({ frame: same, skewMs: 3 })
    expect(channel.recent).toHaveLength(4)
    await channel.stop()
  })

  it('is too late when the first frame after is beyond the bound, or none comes by then: the reason names the distance and the setting', async () => {
    const { channel, reader } = await channelWithReader()
    reader.frame(11_000)
    expect(await reasonOf(fullFrameAfter(channel, analysedAt(10_200), timing(() => 11_050))))
      .toBe('too late: the first frame at the camera\'s size after the analysed frame is 800 ms after it (SNAPSHOT_MAX_SKEW_MS 700)')
    // Analysed at 11 500 (decoded 11 520): the wait ends at 12 220; the clock says 12 210, and no frame comes.
    expect(await reasonOf(fullFrameAfter(channel, analysedAt(11_500), timing(() => 12_210))))
      .toBe('too late: no frame at the camera\'s size within 700 ms after the analysed frame (SNAPSHOT_MAX_SKEW_MS 700)')
    expect(reader.bursts).toEqual([true, false])
    await channel.stop()
  })

  it('has nothing while the camera\'s reader has no frame, or fails during the wait', async () => {
    const { channel, reader } = await channelWithReader()
    expect(await reasonOf(fullFrameAfter(channel, analysedAt(10_000), timing(() => 10_000)))).toBe('the camera\'s own reader has no frame (connecting)')
    reader.frame(10_000)
    const waiting = reasonOf(fullFrameAfter(channel, analysedAt(10_500), timing(() => 10_520)))
    await tick()
    reader.handlers.onFailure(failure('CameraSourceFailed', 'no frame for 4000 ms'))
    // The wait ends at the failure (not at its bound).
    expect(await waiting).toBe('too late: no frame at the camera\'s size within 700 ms after the analysed frame (SNAPSHOT_MAX_SKEW_MS 700)')
    expect(await reasonOf(fullFrameAfter(channel, analysedAt(10_000), timing(() => 10_000)))).toBe('the camera\'s own reader has no frame (offline)')
    await channel.stop()
  })

  it('compares decode times on the monotonic clock when a frame has no reception time (sources other than RTSP)', async () => {
    const { channel, reader } = await channelWithReader()
    const latest = reader.frame(10_000)
    latest.pts = null
    expect(await fullFrameAfter(channel, analysedAt(9_950), timing(() => 10_050))).toEqual({ frame: latest, skewMs: 60 })
    // The wall clock stepped back 3 h between the two decodes (docs/system.md "Clocks"): still 60 ms apart.
    const beforeTheStep = { ...analysedAt(9_950), time: 9_970 + 3 * 3_600_000 }
    expect(await fullFrameAfter(channel, beforeTheStep, timing(() => 10_050))).toEqual({ frame: latest, skewMs: 60 })
    await channel.stop()
  })
})
