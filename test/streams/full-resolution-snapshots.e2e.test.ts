import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import { expect } from 'vitest'
import { addFootageCamera, type FootageCamera } from '../helpers/cameras.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { startDevice, type DeviceProcess } from '../helpers/device.ts'
import { FFMPEG, probe } from '../helpers/media.ts'
import { until } from '../helpers/processes.ts'
import { PERSON_VIDEO } from '../helpers/video.ts'

/** The camera's size: the footage (768 × 432) scaled up, larger than the analysis size (512 × 288 for the person detector). */
const CAMERA = { width: 1280, height: 720 }
const ANALYSED = { width: 512, height: 288 }
/**
 * The footage's first 40 s: empty office until the first person walks in at 6 s, stays at the
 * table and has left at 19 s; the second walks in at 23 s (tests/alarms' VISITS, read from its frames).
 */
const SECONDS = 40

type Box = { x: number; y: number; width: number; height: number }
/**
 * The share of a region's pixels (sampled every other pixel) that differ from the empty office (summed RGB difference
 * above 60): where a person is, inside `box` or outside it. An empty frame of the footage gives 0.000 both; the first
 * visitor at the table (10 s) fills 0.56 of their box with 0.001 elsewhere; entering at the bottom edge (7.2–7.5 s),
 * 0.14–0.25 of their box with 0.08–0.10 elsewhere (measured on the 1280 × 720 copy).
 */
async function personShare(jpeg: Buffer, empty: Buffer, box: Box): Promise<{ inside: number; outside: number }> {
  const at = await pixels(jpeg)
  const background = await pixels(empty)
  const counts = { inside: [0, 0], outside: [0, 0] }
  for (let y = 0; y < CAMERA.height; y += 2)
    for (let x = 0; x < CAMERA.width; x += 2) {
      const where = x >= box.x && x < box.x + box.width && y >= box.y && y < box.y + box.height ? counts.inside : counts.outside
      const a = at(x, y), b = background(x, y)
      where[0]!++
      if (Math.abs(a.r - b.r) + Math.abs(a.g - b.g) + Math.abs(a.b - b.b) > 60) where[1]!++
    }
  return { inside: counts.inside[1]! / counts.inside[0]!, outside: counts.outside[1]! / counts.outside[0]! }
}

/** A pixel of a decoded picture (RGB). */
async function pixels(jpeg: Buffer) {
  const { data, info } = await sharp(jpeg).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  const clamp = (v: number, size: number) => Math.max(0, Math.min(size - 1, Math.round(v)))
  return (x: number, y: number) => {
    const i = (clamp(y, info.height) * info.width + clamp(x, info.width)) * 3
    return { r: data[i]!, g: data[i + 1]!, b: data[i + 2]! }
  }
}

/**
 * The colour at the middles of the box's edges that lie inside the picture (the stroke is centred on them; an edge of a
 * box reaching past the picture's border is not drawn): drawn at other coordinates, they miss.
 */
async function edgeColours(jpeg: Buffer, box: Box): Promise<{ r: number; g: number; b: number }[]> {
  const at = await pixels(jpeg)
  const { width, height } = await sharp(jpeg).metadata()
  const inside = ([x, y]: number[]) => x! >= 0 && y! >= 0 && Math.round(x!) < width! && Math.round(y!) < height!
  const edges = [
    [box.x + box.width / 2, box.y], [box.x + box.width / 2, box.y + box.height],
    [box.x, box.y + box.height / 2], [box.x + box.width, box.y + box.height / 2],
  ].filter(inside)
  expect(edges.length).toBeGreaterThanOrEqual(2)
  return edges.map(([x, y]) => at(x!, y!))
}
const green = ({ r, g, b }: { r: number; g: number; b: number }) => g - Math.max(r, b) > 80
const red = ({ r, g, b }: { r: number; g: number; b: number }) => r - Math.max(g, b) > 80

// Full-resolution snapshots are off by default (docs/cameras-and-stream-tasks.md "Snapshots").
test.override('deviceOptions', { env: { EVENT_POLL_MS: '100', SNAPSHOT_FULL_RESOLUTION: 'true' } })

test.describe('full-resolution snapshots (docs/cameras-and-stream-tasks.md "Snapshots")', () => {
  let dir: string
  let video: string
  const cameras: FootageCamera[] = []

  test.beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'snapshots-test-'))
    video = path.join(dir, 'office-720p.mp4')
    // A key frame every second, like the footage (a camera's stream joins at a key frame).
    execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-i', PERSON_VIDEO, '-t', String(SECONDS), '-vf', `scale=${CAMERA.width}:${CAMERA.height}`,
      '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-r', '10', '-g', '10', '-keyint_min', '10', '-sc_threshold', '0', '-an', '-y', video])
    expect(probe(video)).toMatchObject(CAMERA)
  })
  test.afterAll(async () => {
    for (const camera of cameras) await camera.server.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  /** A 720p RTSP camera, a dwell policy on it and a person-detector task; answers the first object.entered and the alarm of that object. */
  async function firstVisit(device: DeviceProcess, mtk: string) {
    const ok = async (route: string, body: unknown) => {
      const answer = await device.post(route, body, mtk)
      expect(answer.body.resMsg, route).toEqual([])
      return answer.body.resData
    }
    const camera = await addFootageCamera(device, mtk, 'office', video)
    cameras.push(camera)
    const { cameraId } = camera
    await ok('/gtw/cwai/AlarmStrage/add', { policyName: 'dwell 2 s', conditions: { cameraId, label: 'person', minDwellS: 2 }, cooldownS: 600 })
    await ok('/v1/cwai/aihost/TaskCreate', { taskId: 'snap', algorithmCode: 'person-detector', cameraId, targetFps: 5 })
    const events = async (kinds: string[]) => (await ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 50, kinds, taskId: 'snap' })).rows.reverse()
    const entered = await until(async () => (await events(['object.entered']))[0], 'the first object.entered', 60_000)
    const alarm = await until(async () => (await events(['alarm.raised'])).find((a: any) => a.payload.objectId === entered.payload.objectId), 'its alarm', 30_000)
    const fetchJpeg = async (url: string) => {
      const response = await fetch(device.url + url, { headers: { mtk } })
      expect(response.headers.get('content-type')).toBe('image/jpeg')
      return Buffer.from(await response.arrayBuffer())
    }
    return { cameraId, entered, alarm, enteredJpeg: await fetchJpeg(entered.payload.snapshotUrl), alarmJpeg: await fetchJpeg(alarm.payload.snapshotUrl), ok }
  }

  test('a person walks in front of a 1280 × 720 camera: the object.entered and alarm snapshots are at the camera\'s size, the boxes on the person', { timeout: 180_000 }, async ({ device, mtk }) => {
    const { entered, alarm, enteredJpeg, alarmJpeg, ok } = await firstVisit(device, mtk)
    const summary = JSON.stringify({ entered: entered.payload, alarm: alarm.payload })
    for (const [payload, jpeg] of [[entered.payload, enteredJpeg], [alarm.payload, alarmJpeg]] as const) {
      expect(payload, summary).toMatchObject({ snapshotWidth: CAMERA.width, snapshotHeight: CAMERA.height, snapshotFullResolution: true, snapshotFallback: null })
      // The camera's reader runs at 1 fps: its nearest frame is within the bound (SNAPSHOT_MAX_SKEW_MS, 700).
      expect(payload.snapshotSkewMs, summary).toBeGreaterThanOrEqual(0)
      expect(payload.snapshotSkewMs, summary).toBeLessThanOrEqual(700)
      expect(await sharp(jpeg).metadata()).toMatchObject({ format: 'jpeg', width: CAMERA.width, height: CAMERA.height })
    }
    // The event's box is in the camera's pixels: it is drawn there on the full-size picture (green for the object, red for the alarm).
    const drawnObject = await edgeColours(enteredJpeg, entered.payload.box)
    expect(drawnObject.every(green), JSON.stringify(drawnObject)).toBe(true)
    const drawnAlarm = await edgeColours(alarmJpeg, alarm.payload.box)
    expect(drawnAlarm.every(red), JSON.stringify(drawnAlarm)).toBe(true)
    // The alarm's box lies on the person: the picture differs from the empty office inside the box, more
    // than outside it (the box's stroke left out: inset by 6 px). Not the entered snapshot's: its frame
    // can be from before the person came into view (the reason the setting is off by default).
    // The empty office, 2 s into the video, lossless.
    const empty = execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-ss', '2', '-i', video, '-frames:v', '1', '-f', 'image2', '-c:v', 'png', 'pipe:1'], { maxBuffer: 64 * 1024 * 1024 })
    const inset = (box: Box): Box => ({ x: box.x + 6, y: box.y + 6, width: box.width - 12, height: box.height - 12 })
    // By the alarm (2 s in view) the visitor is further in: most of the box.
    const onAlarm = await personShare(alarmJpeg, empty, inset(alarm.payload.box))
    expect(onAlarm.inside, `${JSON.stringify(onAlarm)}; ${summary}`).toBeGreaterThanOrEqual(0.25)
    expect(onAlarm.inside, `${JSON.stringify(onAlarm)}; ${summary}`).toBeGreaterThan(2 * onAlarm.outside)
    await ok('/v1/cwai/aihost/TaskCancle', { taskId: 'snap' })
  })

  test('a camera whose full-resolution frame comes too late still gives the analysed-frame snapshot, flagged with the reason', { timeout: 180_000 }, async () => {
    // A bound of 1 ms: the camera's reader (1 fps) never has a frame that near the analysed one.
    const device = await startDevice({ env: { EVENT_POLL_MS: '100', SNAPSHOT_FULL_RESOLUTION: 'true', SNAPSHOT_MAX_SKEW_MS: '1' } })
    try {
      const mtk = await device.adminToken()
      const { entered, alarm, enteredJpeg, alarmJpeg } = await firstVisit(device, mtk)
      const summary = JSON.stringify({ entered: entered.payload, alarm: alarm.payload })
      for (const [payload, jpeg] of [[entered.payload, enteredJpeg], [alarm.payload, alarmJpeg]] as const) {
        expect(payload, summary).toMatchObject({
          snapshotWidth: ANALYSED.width, snapshotHeight: ANALYSED.height, snapshotFullResolution: false, snapshotSkewMs: 0,
          snapshotFallback: expect.stringMatching(/^too late: the nearest frame at the camera's size is \d+ ms from the analysed frame \(SNAPSHOT_MAX_SKEW_MS 1\)$/),
        })
        expect(await sharp(jpeg).metadata()).toMatchObject({ format: 'jpeg', ...ANALYSED })
      }
      // The box is drawn scaled down to the analysed frame.
      const scaled = (box: Box): Box => {
        const s = ANALYSED.width / CAMERA.width
        return { x: Math.round(box.x * s), y: Math.round(box.y * s), width: Math.round(box.width * s), height: Math.round(box.height * s) }
      }
      const drawn = await edgeColours(enteredJpeg, scaled(entered.payload.box))
      expect(drawn.every(green), JSON.stringify(drawn)).toBe(true)
      // The reason is logged.
      const logged = await until(async () => device.logs.find((l) => l.msg === 'snapshot at the analysis size: no full-resolution frame'), 'the logged reason', 10_000)
      expect(logged).toMatchObject({ area: 'snapshots', reason: expect.stringMatching(/^too late: the nearest frame at the camera's size is \d+ ms/) })
    } finally {
      await device.stop()
      device.cleanup()
    }
  })
})
