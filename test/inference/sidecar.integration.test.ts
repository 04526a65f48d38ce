import { closeSync, openSync, ftruncateSync, readFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeBmp24 } from './images.ts'
import { rejection, samplePath, startTestInference, type TestInference } from './helpers.ts'

const blazefaceBack = 'face_detection_back_256x256_barracuda.onnx'
const faces = (r: { result: { areaList: { targetList: unknown[] }[] } }) => r.result.areaList.flatMap((a) => a.targetList)

describe('inference sidecar: sessions, errors, restart', () => {
  let inf: TestInference
  beforeAll(async () => { inf = await startTestInference() })
  afterAll(async () => { await inf?.close() })

  it('two pipelines on one model share one session; releasing the last user frees it', async () => {
    await inf.inference.load('task-a', 'face-detection')
    await inf.inference.load('task-b', 'face-presence')
    await inf.inference.load('task-c', 'face-detection')
    let stats = await inf.inference.stats()
    const back = stats.sessions.filter((s) => path.basename(s.model) === blazefaceBack)
    expect(back).toEqual([{ model: expect.stringContaining(blazefaceBack), refs: 2 }])
    expect(stats.pipelines).toEqual(expect.arrayContaining([{ algorithmId: 'face-detection', refs: 2 }, { algorithmId: 'face-presence', refs: 1 }]))
    await inf.inference.release('task-a')
    await inf.inference.release('task-b')
    stats = await inf.inference.stats()
    expect(stats.sessions.filter((s) => path.basename(s.model) === blazefaceBack)).toEqual([{ model: expect.any(String), refs: 1 }])
    await inf.inference.release('task-c')
    stats = await inf.inference.stats()
    expect(stats.sessions).toEqual([])
    expect(stats.pipelines).toEqual([])
  })

  it('unknown algorithm → ActionAlgLoadFailed; detect on a handle never loaded → NotCreated', async () => {
    const load = await rejection(inf.inference.load('x', 'no-such-algorithm'))
    expect(load.item.messageKey).toBe('api.error.ActionAlgLoadFailed')
    const detect = await rejection(inf.inference.detect({ handle: 'never', image: { kind: 'path', path: samplePath(1) } }))
    expect(detect.item.messageKey).toBe('api.error.NotCreated')
  })

  it('a restored handle whose load fails, or a failed switch to another algorithm, is not kept: has() is false, so it is loaded on demand', async () => {
    const restore = await rejection(inf.inference.adopt('restored', 'no-such-algorithm'))
    expect(restore.item.messageKey).toBe('api.error.ActionAlgLoadFailed')
    expect(inf.inference.has('restored')).toBe(false)
    await inf.inference.load('restored', 'face-detection')
    expect(inf.inference.has('restored')).toBe(true)
    // The sidecar released the old pipeline before failing to load the new one.
    const switched = await rejection(inf.inference.load('restored', 'no-such-algorithm'))
    expect(switched.item.messageKey).toBe('api.error.ActionAlgLoadFailed')
    expect(inf.inference.has('restored')).toBe(false)
    expect((await inf.inference.stats()).handles.map((h) => h.handle)).not.toContain('restored')
  })

  it('the logic node sets bLogicResult per target and bDetected per area; regions become areas', async () => {
    await inf.inference.load('presence', 'face-presence', {
      regions: [
        { areaId: 'left', areaName: 'Left half', polygon: [{ xRatio: 0, yRatio: 0 }, { xRatio: 0.5, yRatio: 0 }, { xRatio: 0.5, yRatio: 1 }, { xRatio: 0, yRatio: 1 }] },
        { areaId: 'corner', polygon: [{ xRatio: 0.9, yRatio: 0.9 }, { xRatio: 1, yRatio: 0.9 }, { xRatio: 1, yRatio: 1 }] },
      ],
    })
    const { result } = await inf.inference.detect({ handle: 'presence', image: { kind: 'path', path: samplePath(1) }, overlay: false })
    expect(result.areaList.map((a) => [a.areaId, a.areaName])).toEqual([['left', 'Left half'], ['corner', 'corner']])
    const [left, corner] = result.areaList as [typeof result.areaList[0], typeof result.areaList[0]]
    expect(corner.targetList).toEqual([])
    expect(corner.bDetected).toBe(false)
    expect(left.targetList.length).toBeGreaterThan(0)
    for (const t of left.targetList) {
      expect(t.box.x + t.box.width / 2).toBeLessThan(960)
      expect(t.bLogicResult).toBe(t.confidence[0]!.confidence >= 0.7)
    }
    expect(left.bDetected).toBe(left.targetList.some((t) => t.bLogicResult))
    await inf.inference.release('presence')
  })

  it('taskConfig thresholds override the manifest; reloading the same handle reuses it with the new config', async () => {
    await inf.inference.load('strict', 'face-detection')
    const normal = faces(await inf.inference.detect({ handle: 'strict', image: { kind: 'path', path: samplePath(2) }, overlay: false }))
    await inf.inference.load('strict', 'face-detection', { scoreThreshold: 0.75 })
    const strict = faces(await inf.inference.detect({ handle: 'strict', image: { kind: 'path', path: samplePath(2) }, overlay: false })) as { confidence: { confidence: number }[] }[]
    expect(strict.length).toBeLessThan(normal.length)
    for (const t of strict) expect(t.confidence[0]!.confidence).toBeGreaterThanOrEqual(0.75)
    expect((await inf.inference.stats()).handles.filter((h) => h.handle === 'strict')).toHaveLength(1)
    await inf.inference.release('strict')
  })

  it('BMP bytes are decoded and give the same faces as the JPEG', async () => {
    await inf.inference.load('bmp', 'face-detection')
    const { data, info } = await sharp(samplePath(1)).raw().toBuffer({ resolveWithObject: true })
    const bmp = encodeBmp24(data, info.width, info.height)
    const fromBmp = await inf.inference.detect({ handle: 'bmp', image: { kind: 'bytes', bytes: bmp } })
    const fromJpeg = await inf.inference.detect({ handle: 'bmp', image: { kind: 'path', path: samplePath(1) } })
    expect(faces(fromBmp)).toHaveLength(faces(fromJpeg).length)
    expect(faces(fromBmp)).toHaveLength(3)
    await inf.inference.release('bmp')
  })

  it('image errors keep their catalogue identity and details across the socket', async () => {
    await inf.inference.load('errors', 'face-detection')
    const corrupt = await rejection(inf.inference.detect({ handle: 'errors', image: { kind: 'bytes', bytes: readFileSync(samplePath(1)).subarray(0, 1000) } }))
    expect(corrupt.item.messageKey).toBe('api.error.ImageDecodeFailed')
    // A 40 MB staged file (sparse): refused from its size alone.
    const big = path.join(inf.dataDir, 'big.jpg')
    const fd = openSync(big, 'w'); ftruncateSync(fd, 40 * 1024 * 1024); closeSync(fd)
    const tooLarge = await rejection(inf.inference.detect({ handle: 'errors', image: { kind: 'path', path: big }, purpose: 'image' }))
    expect(tooLarge.item).toMatchObject({
      messageKey: 'api.error.imageInputTooLarge',
      recommendedAction: 'RESIZE_OR_RECOMPRESS_IMAGE',
      details: { actualBytes: 40 * 1024 * 1024, limitBytes: 32 * 1024 * 1024, resource: 'encoded-image', purpose: 'image' },
    })
    await inf.inference.release('errors')
  })

  it('frame path: raw RGB frames with a deadline, no overlay; a passed deadline fails retryably', async () => {
    await inf.inference.load('camera', 'face-detection')
    const { data, info } = await sharp(samplePath(4)).resize(960).raw().toBuffer({ resolveWithObject: true })
    const frame = { kind: 'rgb' as const, width: info.width, height: info.height, data }
    const outcome = await inf.inference.detect({ handle: 'camera', image: frame, overlay: false, deadline: performance.now() + 30_000 })
    expect(outcome.overlayJpeg).toBeNull()
    expect(faces(outcome).length).toBeGreaterThanOrEqual(3)
    const late = await rejection(inf.inference.detect({ handle: 'camera', image: frame, overlay: false, deadline: performance.now() - 1 }))
    expect(late.item).toMatchObject({ messageKey: 'api.error.InferenceDeadlineExceeded', retryable: true })
    const short = await rejection(inf.inference.detect({ handle: 'camera', image: { ...frame, width: info.width + 1 }, overlay: false }))
    expect(short.item.messageKey).toBe('api.error.ImageDecodeFailed')
    await inf.inference.release('camera')
  })

  it('release while a detection runs on the handle is refused with TaskBusy', async () => {
    await inf.inference.load('busy', 'face-detection')
    const running = inf.inference.detect({ handle: 'busy', image: { kind: 'path', path: samplePath(3) } })
    const busy = await rejection(inf.inference.release('busy'))
    expect(busy.item).toMatchObject({ messageKey: 'api.error.TaskBusy', retryable: true })
    await running
    await inf.inference.release('busy')
    expect(inf.inference.has('busy')).toBe(false)
  })

  it('sidecar killed during a detection: the request fails at once and retryably; the next one succeeds on the restarted sidecar', async () => {
    await inf.inference.load('survivor', 'face-detection')
    const firstPid = inf.supervisor.pid!
    const inFlight = inf.inference.detect({ handle: 'survivor', image: { kind: 'path', path: samplePath(6) } })
    process.kill(firstPid, 'SIGKILL')
    const failed = await rejection(inFlight)
    expect(failed.item).toMatchObject({ messageKey: 'api.error.SidecarUnavailable', retryable: true, recommendedAction: 'RETRY' })
    // The handle is re-established on the new process: no new load call.
    const again = await inf.inference.detect({ handle: 'survivor', image: { kind: 'path', path: samplePath(6) } })
    expect(inf.supervisor.pid).not.toBe(firstPid)
    expect(faces(again)).toHaveLength(4)
    const stats = await inf.inference.stats()
    expect(stats.pid).toBe(inf.supervisor.pid)
    expect(stats.handles).toContainEqual({ handle: 'survivor', algorithmId: 'face-detection' })
  })
})
