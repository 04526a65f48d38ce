import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { detectionBytes } from '../../runtime/sidecar/image/memory-budget.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { rejection, startTestInference, type TestInference } from '../inference/helpers.ts'

const MiB = 1024 * 1024
// A legal 62-megapixel PNG (under MAX_IMAGE_PIXELS 64 M) of one colour: ~190 KB encoded, 178 MiB decoded.
const WIDTH = 9000
const HEIGHT = 6900
/** Room for two such detections at once (4 bytes a pixel with the overlay: 474 MiB). */
const BUDGET = 2 * detectionBytes(WIDTH, HEIGHT, true)
/**
 * What the sidecar may hold above its idle RSS besides the budget: encoded images, socket
 * frames, tensors, libvips and V8 bookkeeping (it was 3.5 GiB above idle without admission).
 */
const OVERHEAD = 128 * MiB
/** After the burst the sidecar gives memory back: measured ~120 MiB, at or below idle (it was 2.8 GiB). */
const AFTER_SLACK = 100 * MiB

/** VmRSS and VmHWM (peak RSS) of a process, in bytes. */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') }
}

test.override('deviceOptions', { env: { DECODE_MEMORY_BUDGET_BYTES: String(BUDGET), DECODE_QUEUE_MAX: '4' } })

test.describe('decode memory admission under concurrent large images (spec 4.11, 2.7)', () => {
  let device: DeviceProcess
  let mtk: string
  let image: string
  const taskId = randomUUID()
  const detect = (imageBase64: string) =>
    device.post('/gtw/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode: 'face-detection', imageBase64 }, mtk)

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    const png = await sharp({ create: { width: WIDTH, height: HEIGHT, channels: 3, background: '#7a8b9c' } }).png({ compressionLevel: 9 }).toBuffer()
    image = png.toString('base64')
    const created = await device.post('/gtw/cwai/aihost/PTaskCreate', { taskId, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }, mtk)
    expect(created.body.resCode).toBe(1)
  })

  test('answers twelve concurrent 62-megapixel detections with a result or a retryable refusal, keeps the sidecar under its budget and gives the memory back', async () => {
    const pid = [...device.logs].reverse().find((l) => l.msg === 'inference sidecar ready')!.pid as number
    const idle = memoryOf(pid).rss

    const answers = await Promise.all(Array.from({ length: 12 }, () => detect(image)))
    const peak = memoryOf(pid).hwm

    expect(peak, `peak ${Math.round(peak / MiB)} MiB, idle ${Math.round(idle / MiB)} MiB`).toBeLessThanOrEqual(idle + BUDGET + OVERHEAD)
    const succeeded = answers.filter((a) => a.body.resCode === 1)
    const refused = answers.filter((a) => a.body.resCode !== 1)
    for (const a of succeeded) expect(a.status).toBe(200)
    for (const a of refused) {
      expect(a.status).toBe(503)
      expect(a.body.resMsg).toHaveLength(1)
      expect(a.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.ImageMemoryBusy', retryable: true, recommendedAction: 'RETRY_LATER', details: { resource: 'decode-memory', budgetBytes: BUDGET } })
      expect(a.body.resMsg[0].retryAfterSeconds).toBeGreaterThanOrEqual(1)
    }
    // Two run, four wait, the rest are refused at once: both outcomes occur.
    expect(succeeded.length).toBeGreaterThan(0)
    expect(refused.length).toBeGreaterThan(0)

    // The RSS comes back down once the burst is over (polled: freeing is asynchronous).
    let after = memoryOf(pid).rss
    for (let i = 0; i < 100 && after > idle + AFTER_SLACK; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      after = memoryOf(pid).rss
    }
    expect(after, `after ${Math.round(after / MiB)} MiB, idle ${Math.round(idle / MiB)} MiB`).toBeLessThanOrEqual(idle + AFTER_SLACK)
  })

  test('frees the memory of detections that fail after admission: a later image is admitted', async () => {
    // Header intact (62 MP, admitted), data cut short: the decode fails after admission.
    const truncated = Buffer.from(image, 'base64')
    const corrupt = truncated.subarray(0, truncated.length >> 1).toString('base64')
    const failed = await Promise.all([detect(corrupt), detect(corrupt)])
    for (const f of failed) expect(f.body.resMsg[0].messageKey).toBe('api.error.ImageDecodeFailed')
    // Had the two failures kept their reservations, the budget would be full and this would be refused.
    const ok = await detect(image)
    expect(ok.body.resCode).toBe(1)
  })
})

describe('a detection waiting for decode memory', () => {
  let inf: TestInference
  beforeAll(async () => {
    // Room for one 62-megapixel detection at a time.
    inf = await startTestInference({ decodeMemoryBudgetBytes: detectionBytes(WIDTH, HEIGHT, true) })
    await inf.inference.load('waiting', 'face-detection')
  })
  afterAll(async () => { await inf?.close() })

  it('stops waiting when its caller goes away, and the sidecar forgets it', async () => {
    const png = await sharp({ create: { width: WIDTH, height: HEIGHT, channels: 3, background: '#203040' } }).png({ compressionLevel: 9 }).toBuffer()
    const running = inf.inference.detect({ handle: 'waiting', image: { kind: 'bytes', bytes: png } })
    // A second waiter ahead of the one that goes away: the abort lands while two detections
    // still stand before it, however fast one detection is.
    const queued = inf.inference.detect({ handle: 'waiting', image: { kind: 'bytes', bytes: png } })
    while ((await inf.inference.stats()).memory.waiting === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    const caller = new AbortController()
    const waiting = inf.inference.detect({ handle: 'waiting', image: { kind: 'bytes', bytes: png }, signal: caller.signal })
    while ((await inf.inference.stats()).memory.waiting < 2) await new Promise((resolve) => setTimeout(resolve, 5))
    caller.abort()
    const error = await rejection(waiting)
    expect(error).toMatchObject({ id: 'ImageMemoryBusy', item: { retryable: true, details: { reason: 'aborted', resource: 'decode-memory' } } })
    expect((await running).result.algorithmCode).toBe('face-detection')
    expect((await queued).result.algorithmCode).toBe('face-detection')
    const after = (await inf.inference.stats()).memory
    expect(after.waiting).toBe(0)
    expect(after.inUseBytes).toBe(0)
  })
})
