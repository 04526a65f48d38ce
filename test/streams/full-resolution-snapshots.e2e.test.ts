import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import { expect } from 'vitest'
import { iou } from '../../runtime/streams/tracker.ts'
import { SAME_MOMENT_MS } from '../../runtime/cameras/full-frame.ts'
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
 * The footage's first 70 s: three visits, one person at a time, each in view longer than the
 * policy's 2 s dwell (5–19 s, 21–44 s, 49–69 s; bench/capacity/visits.ts, read from its frames).
 */
const SECONDS = 70
const VISITS = 3
/**
 * The person the device's own detector finds on the snapshot must overlap the event's box by at
 * least this IoU. The snapshot of the wrong moment fails it by far: the empty room, or the person
 * of a moment before they came into view, has no person box there (IoU 0). The right moment passes
 * it with room to spare: on the analysed frame itself (snapshots at the analysis size, skew 0) the
 * detector's box on the JPEG and the event's box of a person coming in at the picture's edge agree
 * to IoU 0.73 at the least, on the camera's frame up to 300 ms later to 0.52 at the least
 * (bench/snapshot-channel-cpu.bench.ts, six visits), a walker moving a little in that time.
 */
const MIN_IOU = 0.4
/** The default SNAPSHOT_MAX_SKEW_MS (shared/config.ts). */
const MAX_SKEW_MS = 1000

type Box = { x: number; y: number; width: number; height: number }

/** The colour at the middles of the box's edges that lie inside the picture (drawn at other coordinates, they miss). */
async function edgeColours(jpeg: Buffer, box: Box): Promise<{ r: number; g: number; b: number }[]> {
  const { data, info } = await sharp(jpeg).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  const at = (x: number, y: number) => {
    const i = (Math.round(y) * info.width + Math.round(x)) * 3
    return { r: data[i]!, g: data[i + 1]!, b: data[i + 2]! }
  }
  const inside = ([x, y]: number[]) => x! >= 0 && y! >= 0 && Math.round(x!) < info.width && Math.round(y!) < info.height
  const edges = [
    [box.x + box.width / 2, box.y], [box.x + box.width / 2, box.y + box.height],
    [box.x, box.y + box.height / 2], [box.x + box.width, box.y + box.height / 2],
  ].filter(inside)
  expect(edges.length).toBeGreaterThanOrEqual(2)
  return edges.map(([x, y]) => at(x!, y!))
}
const green = ({ r, g, b }: { r: number; g: number; b: number }) => g - Math.max(r, b) > 80
const red = ({ r, g, b }: { r: number; g: number; b: number }) => r - Math.max(g, b) > 80

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

  /**
   * A 720p RTSP camera, a dwell policy on it and a person-detector task, until `alarms` people
   * have raised an alarm: every object.entered and alarm.raised so far, with their snapshots.
   */
  async function visits(device: DeviceProcess, mtk: string, alarms: number) {
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
    const events = async (kinds: string[]) => (await ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 100, kinds, taskId: 'snap' })).rows.reverse()
    const raised = await until(async () => {
      const rows = await events(['alarm.raised'])
      return rows.length >= alarms ? rows : null
    }, `${alarms} alarms`, 100_000 + SECONDS * 1000)
    await ok('/v1/cwai/aihost/TaskCancle', { taskId: 'snap' })
    const entered = await events(['object.entered'])
    const fetchJpeg = async (url: string) => {
      const response = await fetch(device.url + url, { headers: { mtk } })
      expect(response.headers.get('content-type')).toBe('image/jpeg')
      return Buffer.from(await response.arrayBuffer())
    }
    const shots = [...entered, ...raised].map(async (event: any) => ({ kind: event.kind as string, payload: event.payload, jpeg: await fetchJpeg(event.payload.snapshotUrl) }))
    return { ok, shots: await Promise.all(shots) }
  }

  test(`people walk in front of a 1280 × 720 camera, ${VISITS} visits: every object.entered and alarm snapshot is at the camera's size, taken at or after the detection, and the device's detector finds the person under the event's box`, { timeout: 300_000 }, async ({ device, mtk }) => {
    const { ok, shots } = await visits(device, mtk, VISITS)
    await ok('/gtw/cwai/aihost/PTaskCreate', { taskId: 'check', algorithmCode: 'person-detector', algorithmUpdateTime: String(Date.now()) })
    // The person the device's own detector finds on each snapshot, nearest the event's box.
    const checked = []
    for (const shot of shots) {
      const detected = await ok('/gtw/cwai/aihost/PTaskDetectPic', { taskId: 'check', algorithmCode: 'person-detector', imageBase64: shot.jpeg.toString('base64') })
      const people: Box[] = detected.areaList.flatMap((a: any) => a.targetList).filter((t: any) => t.confidence[0]?.label === 'person').map((t: any) => t.box)
      checked.push({ ...shot, people, iou: Math.max(0, ...people.map((box) => iou(box, shot.payload.box))) })
    }
    console.log(`snapshots measured: ${JSON.stringify(checked.map(({ kind, payload, iou }) => ({ kind, skewMs: payload.snapshotSkewMs, iou: Number(iou.toFixed(3)) })))}`)
    for (const { kind, payload, jpeg, people, iou: best } of checked) {
      const summary = `${kind} ${JSON.stringify(payload)}`
      expect(payload, summary).toMatchObject({ snapshotWidth: CAMERA.width, snapshotHeight: CAMERA.height, snapshotFullResolution: true, snapshotFallback: null })
      // At or after the analysed frame (the same moment: at most SAME_MOMENT_MS before), within the bound.
      expect(payload.snapshotSkewMs, summary).toBeGreaterThanOrEqual(-SAME_MOMENT_MS)
      expect(payload.snapshotSkewMs, summary).toBeLessThanOrEqual(MAX_SKEW_MS)
      expect(await sharp(jpeg).metadata()).toMatchObject({ format: 'jpeg', width: CAMERA.width, height: CAMERA.height })
      // The event's box (the camera's pixels) is drawn there on the full-size picture: green for the object, red for the alarm.
      const drawn = await edgeColours(jpeg, payload.box)
      expect(drawn.every(kind === 'object.entered' ? green : red), `${JSON.stringify(drawn)}; ${summary}`).toBe(true)
      // The person is in the picture under the box.
      expect(best, `IoU with the detected people ${JSON.stringify(people)}; ${summary}`).toBeGreaterThanOrEqual(MIN_IOU)
    }
    // Every visit's person: one object.entered (at least) and one alarm each.
    expect(shots.filter((s) => s.kind === 'alarm.raised').length).toBeGreaterThanOrEqual(VISITS)
    expect(shots.filter((s) => s.kind === 'object.entered').length).toBeGreaterThanOrEqual(VISITS)
  })

  test('a camera whose full-resolution frame comes too late still gives the analysed-frame snapshot, flagged with the reason', { timeout: 300_000 }, async () => {
    // A bound of 1 ms: no frame of the camera's reader comes that soon after the detection (only the very frame
    // analysed, when the camera's reader kept it too, is within it: then it is the snapshot, at the camera's size).
    const device = await startDevice({ env: { EVENT_POLL_MS: '100', SNAPSHOT_FULL_RESOLUTION: 'true', SNAPSHOT_MAX_SKEW_MS: '1' } })
    try {
      const mtk = await device.adminToken()
      const { shots } = await visits(device, mtk, 2)
      let fallbacks = 0
      for (const { kind, payload, jpeg } of shots) {
        const summary = `${kind} ${JSON.stringify(payload)}`
        if (payload.snapshotFullResolution) {
          expect(payload, summary).toMatchObject({ snapshotWidth: CAMERA.width, snapshotHeight: CAMERA.height, snapshotFallback: null })
          expect(Math.abs(payload.snapshotSkewMs), summary).toBeLessThanOrEqual(SAME_MOMENT_MS)
          continue
        }
        fallbacks++
        expect(payload, summary).toMatchObject({
          snapshotWidth: ANALYSED.width, snapshotHeight: ANALYSED.height, snapshotSkewMs: 0,
          snapshotFallback: expect.stringMatching(/^too late: (no frame at the camera's size within 1 ms after the analysed frame|the first frame at the camera's size after the analysed frame is \d+ ms after it) \(SNAPSHOT_MAX_SKEW_MS 1\)$/),
        })
        expect(await sharp(jpeg).metadata()).toMatchObject({ format: 'jpeg', ...ANALYSED })
        // The box is drawn scaled down to the analysed frame.
        const s = ANALYSED.width / CAMERA.width
        const box = payload.box as Box
        const drawn = await edgeColours(jpeg, { x: Math.round(box.x * s), y: Math.round(box.y * s), width: Math.round(box.width * s), height: Math.round(box.height * s) })
        expect(drawn.every(kind === 'object.entered' ? green : red), `${JSON.stringify(drawn)}; ${summary}`).toBe(true)
      }
      // At least four snapshots (two entered, two alarms): the very frame analysed is the camera reader's for about one in ten.
      expect(shots.length).toBeGreaterThanOrEqual(4)
      expect(fallbacks).toBeGreaterThanOrEqual(1)
      // The reason is logged.
      const logged = await until(async () => device.logs.find((l) => l.msg === 'snapshot at the analysis size: no full-resolution frame'), 'the logged reason', 10_000)
      expect(logged).toMatchObject({ area: 'snapshots', reason: expect.stringMatching(/^too late: /) })
    } finally {
      await device.stop()
      device.cleanup()
    }
  })
})
