import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { frameJpeg, spliceVideo } from '../helpers/media.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { PERSON_VIDEO } from '../helpers/video.ts'

/**
 * The footage's first 70 s: three visits, one person at a time, [walks in, has left] in seconds
 * (bench/capacity/visits.ts, counted from its frames), with an empty office before, between and after.
 */
const SECONDS = 70
const VISITS: [number, number][] = [[5, 19], [21, 44], [49, 69]]
const SIZE = { width: 768, height: 432 }
/** Around the people found on the survey frames, on each side (ratios of the picture): their steps between two survey frames, shadows. */
const MARGIN = 0.05
/** The detector runs only on motion: without motion, not for 10 minutes (its maximum; the default is 1000). */
const NO_INTERVAL = 600_000

test.describe('motion masks (docs/cameras-and-stream-tasks.md "Motion gating")', () => {
  let dir: string
  let video: string

  test.beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'motion-masks-test-'))
    video = path.join(dir, 'office-70s.mp4')
    spliceVideo(PERSON_VIDEO, [[0, SECONDS]], video)
  })
  test.afterAll(() => rmSync(dir, { recursive: true, force: true }))

  test('a mask over where the people walk keeps their motion from the detector: no object.entered, nearly every frame motion-skipped; the same footage without the mask finds every visit', { timeout: 240_000 }, async ({ device, mtk }) => {
    const ok = async (route: string, body: unknown) => {
      const answer = await device.post(route, body, mtk)
      expect(answer.body.resMsg, route).toEqual([])
      return answer.body.resData
    }
    // Where the people are: the device's person detector on a frame every 2 s of the footage.
    await ok('/gtw/cwai/aihost/PTaskCreate', { taskId: 'survey', algorithmCode: 'person-detector', algorithmUpdateTime: String(Date.now()) })
    const found: { t: number; box: { x: number; y: number; width: number; height: number } }[] = []
    for (let t = 1; t < SECONDS; t += 2) {
      const detected = await ok('/gtw/cwai/aihost/PTaskDetectPic', { taskId: 'survey', algorithmCode: 'person-detector', imageBase64: (await frameJpeg(video, t)).toString('base64') })
      for (const target of detected.areaList.flatMap((a: any) => a.targetList)) if (target.confidence[0]?.label === 'person') found.push({ t, box: target.box })
    }
    // Every visit has people on its survey frames, the empty stretches none (bench/capacity/visits.ts).
    for (const [walksIn, hasLeft] of VISITS) expect(found.some(({ t }) => t > walksIn + 1 && t < hasLeft - 1), `${walksIn}–${hasLeft} s: ${JSON.stringify(found)}`).toBe(true)
    expect(found.filter(({ t }) => !VISITS.some(([a, b]) => t >= a - 1 && t <= b + 1)), JSON.stringify(found)).toEqual([])
    const clamp = (v: number) => Math.max(0, Math.min(1, v))
    const mask = {
      left: clamp(Math.min(...found.map(({ box }) => box.x / SIZE.width)) - MARGIN),
      top: clamp(Math.min(...found.map(({ box }) => box.y / SIZE.height)) - MARGIN),
      right: clamp(Math.max(...found.map(({ box }) => (box.x + box.width) / SIZE.width)) + MARGIN),
      bottom: clamp(Math.max(...found.map(({ box }) => (box.y + box.height) / SIZE.height)) + MARGIN),
    }
    // Not the whole picture: the rest of the office is outside it.
    const maskArea = (mask.right - mask.left) * (mask.bottom - mask.top)
    expect(maskArea, JSON.stringify(mask)).toBeLessThan(0.8)
    const polygon = [[mask.left, mask.top], [mask.right, mask.top], [mask.right, mask.bottom], [mask.left, mask.bottom]].map(([xRatio, yRatio]) => ({ xRatio, yRatio }))

    // A file camera: each task's reader plays the video from its start, so both tasks see the same footage at the same time.
    const uploadId = await uploadFile(device, mtk, readFileSync(video), 'office-70s.mp4', 'video')
    const { cameraId } = await ok('/gtw/cwai/Camera/add', { cameraName: 'office', sourceType: 'file', uploadId })
    const base = { algorithmCode: 'person-detector', cameraId, targetFps: 5, minDetectIntervalMs: NO_INTERVAL }
    await ok('/v1/cwai/aihost/TaskCreate', { ...base, taskId: 'masked', taskConfig: { motionMasks: [{ areaId: 'walkway', areaName: 'where people walk', polygon }] } })
    await ok('/v1/cwai/aihost/TaskCreate', { ...base, taskId: 'open' })
    const start = Date.now()
    // The footage once, and the leave delay of the last visit.
    await new Promise((resolve) => setTimeout(resolve, (SECONDS + 3) * 1000))
    const status = async (taskId: string) => ok('/v1/cwai/aihost/QueryTaskStatus', { taskId })
    const [masked, open] = [await status('masked'), await status('open')]
    const entered = (await ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 500, kinds: ['object.entered'] })).rows.reverse()
      .map((e: any) => ({ taskId: e.payload.taskId, at: (Date.parse(e.time) - start) / 1000 }))
      .filter((e: any) => e.at < SECONDS + 3)
    const summary = JSON.stringify({ mask, entered, masked: { framesProcessed: masked.framesProcessed, motionSkipped: masked.motionSkipped }, open: { framesProcessed: open.framesProcessed, motionSkipped: open.motionSkipped } })
    console.log(`motion masks measured: ${summary}`)

    // Without the mask: one object.entered in each visit (file cameras play from 0 s within a second or two of the answer).
    const openEntered = entered.filter((e: any) => e.taskId === 'open')
    for (const [walksIn, hasLeft] of VISITS) expect(openEntered.filter((e: any) => e.at >= walksIn && e.at <= hasLeft + 2).length, summary).toBeGreaterThanOrEqual(1)
    expect(open.objectsEntered, summary).toBeGreaterThanOrEqual(VISITS.length)
    // With it: the people's motion never reaches the detector, so nobody is detected.
    expect(entered.filter((e: any) => e.taskId === 'masked'), summary).toEqual([])
    expect(masked.objectsEntered, summary).toBe(0)
    // Nearly every frame motion-skipped: the detector ran on the first frame (nothing detected before) and on at most
    // 2 % of the frames for motion outside the mask; 5 fps for 70 s is about 350 frames.
    expect(masked.framesProcessed, summary).toBeGreaterThan(300)
    expect(masked.framesProcessed - masked.motionSkipped, summary).toBeGreaterThanOrEqual(1)
    expect(masked.framesProcessed - masked.motionSkipped, summary).toBeLessThanOrEqual(Math.ceil(masked.framesProcessed * 0.02))
    // The same footage without the mask sends the people's motion to the detector.
    expect(open.framesProcessed - open.motionSkipped, summary).toBeGreaterThan(20)
    await ok('/v1/cwai/aihost/TaskCancle', { taskId: 'masked' })
    await ok('/v1/cwai/aihost/TaskCancle', { taskId: 'open' })
  })
})
