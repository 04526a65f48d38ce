import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { freePort, type DeviceProcess } from '../helpers/device.ts'
import { deviceTest } from '../helpers/device-fixture.ts'
import { addRtspCamera } from '../helpers/cameras.ts'
import { startRtspServer, type RtspServer } from '../helpers/rtsp-server.ts'
import { childProcesses, until } from '../helpers/processes.ts'
import { connectEvents, type WsRecorder } from '../helpers/ws-client.ts'
import { PERSON_VIDEO } from '../helpers/video.ts'

const MB = 1024 * 1024
const RESERVE = 24 * MB
const HEADROOM = 2 * MB

/** Appends `bytes` to `file` (zeros, really written: tmpfs has no holes to hide them in). */
function grow(file: string, bytes: number): void {
  const fd = openSync(file, 'a')
  try {
    for (let left = bytes; left > 0; left -= MB) writeSync(fd, Buffer.alloc(Math.min(MB, left)))
  } finally {
    closeSync(fd)
  }
}

/** A small filesystem of the file's own (tmpfs, mounted as root), unmounted after the device stops. */
// eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from this pattern
const test = deviceTest.extend('mountPoint', { scope: 'file' }, async ({}, { onCleanup }) => {
  const mountPoint = mkdtempSync(path.join(tmpdir(), 'record-reserve-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', mountPoint])
  onCleanup(() => {
    execFileSync('umount', ['-l', mountPoint])
    rmSync(mountPoint, { recursive: true, force: true })
  })
  return mountPoint
})
test.override('deviceOptions', { scope: 'file' }, async ({ mountPoint }: { mountPoint: string }) => ({
  dataDir: path.join(mountPoint, 'data'),
  env: {
    UPLOAD_RESERVE_BYTES: String(RESERVE), RECORD_HEADROOM_BYTES: String(HEADROOM), RECORD_SEGMENT_SECONDS: '1',
    RECORD_CONTINUOUS_CHUNK_SECONDS: '4', RECORD_CHECK_INTERVAL_MS: '250',
  },
}))

/**
 * The device's data folder on that filesystem: recording fills it up to the disk safety reserve
 * (spec 8) and must never go below it.
 */
test.describe('recording at the disk safety reserve (spec 8)', () => {
  let mountPoint: string
  let rtsp: RtspServer
  let device: DeviceProcess
  let mtk: string
  let ws: WsRecorder
  let cameraId: string
  let poller: NodeJS.Timeout
  /** The least free space seen, sampled every 50 ms from the test's side. */
  let leastFree = Infinity
  const free = () => {
    const stats = statfsSync(mountPoint)
    return stats.bavail * stats.bsize
  }
  const post = (route: string, body: unknown) => device.post(route, body, mtk)
  const event = (kind: string, timeoutMs = 60_000, after = 0) =>
    ws.waitFor((f) => f.type === 'event' && f.event.kind === kind && f.event.id > after, timeoutMs).then((f) => f.event)

  test.beforeAll(async ({ mountPoint: mounted, device: started, mtk: session }) => {
    mountPoint = mounted
    rtsp = await startRtspServer(PERSON_VIDEO, await freePort())
    device = started
    mtk = session
    ws = connectEvents(device.wsPort, { mtk })
    cameraId = await addRtspCamera(device, mtk, rtsp.url)
    poller = setInterval(() => { leastFree = Math.min(leastFree, free()) }, 50)
  })
  test.afterAll(async () => {
    clearInterval(poller)
    ws?.ws.close()
    await rtsp?.stop()
  })

  test('deletes the oldest footage to stay above the reserve, suspends recording when none is left, analysis and the database go on, and resumes when space returns', { timeout: 300_000 }, async () => {
    const filler = path.join(mountPoint, 'filler')
    // Room for about 1.5 MB of recording above the reserve and the headroom: a minute of this camera.
    grow(filler, free() - RESERVE - HEADROOM - 1.5 * MB)
    expect((await post('/v1/cwai/aihost/TaskCreate', { taskId: 'people', algorithmCode: 'person-detector', cameraId, targetFps: 2 })).body.resCode).toBe(1)
    expect((await post('/gtw/cwai/System/SetRecordParam', { cameras: [{ cameraId, mode: 'continuous' }] })).body.resCode).toBe(1)

    // Recording fills the room, then the oldest clips go first.
    const deleted = await event('recording.footageDeleted', 180_000)
    expect(deleted.payload.reason).toBe('reserve')
    const readies = ws.events().filter((e: any) => e.kind === 'recording.clipReady' && e.id < deleted.id)
    expect(readies.length).toBeGreaterThan(1)
    const oldest = readies.sort((a: any, b: any) => a.payload.startTime - b.payload.startTime)[0]
    expect(deleted.payload.clipIds[0]).toBe(oldest.payload.clipId)
    expect(deleted.payload.oldestStartTime).toBe(oldest.payload.startTime)
    // ... and it keeps recording: more clips after the deletion.
    await event('recording.clipReady', 60_000, deleted.id)

    // Something else takes the disk down to half the headroom above the reserve: all footage
    // goes, then recording stops writing.
    grow(filler, free() - RESERVE - HEADROOM / 2)
    const suspended = await event('recording.suspended', 60_000)
    expect(suspended.payload).toMatchObject({ cameraId, reason: 'reserve' })
    expect(suspended.payload.availableBytes).toBeLessThan(HEADROOM)
    const params = (await post('/gtw/cwai/System/QueryRecordParam', {})).body.resData
    expect(params.usage.clips).toBe(0)
    expect(params.cameras).toEqual([expect.objectContaining({ cameraId, mode: 'continuous', state: 'suspended' })])
    // The camera's reader and the task's stay; the recorder's ffmpeg is gone.
    await until(async () => childProcesses(device.process.pid!, 'ffmpeg').length === 2, 'only the camera\'s and the task\'s ffmpeg')
    // Analysis goes on while recording waits.
    const framesBefore = (await post('/v1/cwai/aihost/QueryTaskStatus', { taskId: 'people' })).body.resData.framesIn
    await until(async () => (await post('/v1/cwai/aihost/QueryTaskStatus', { taskId: 'people' })).body.resData.framesIn > framesBefore + 4, 'the task to analyse more frames')

    // Space returns: recording resumes by itself.
    rmSync(filler)
    const resumed = await event('recording.resumed', 30_000)
    expect(resumed.payload).toEqual({ cameraId })
    await event('recording.clipReady', 60_000, resumed.id)

    // Never below the reserve, as seen from outside the device.
    expect(leastFree).toBeGreaterThanOrEqual(RESERVE)
    // The database took every write it was given (clips, events) and reads back.
    expect((await post('/gtw/cwai/System/RecordClipPage', { pageSize: 1 })).body.resData.total).toBeGreaterThan(0)
  })
})
