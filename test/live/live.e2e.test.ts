import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { freePort, type DeviceProcess } from '../helpers/device.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { addRtspCamera } from '../helpers/cameras.ts'
import { startRtspServer, type RtspServer } from '../helpers/rtsp-server.ts'
import { childProcesses, until } from '../helpers/processes.ts'
import { keyFrames, probe } from '../helpers/media.ts'
import { PERSON_VIDEO } from '../helpers/video.ts'

const IDLE_MS = 6000
const MAX_VIEWERS = 2

/** Reads a stream for `ms` (or until it ends); returns the bytes and whether it ended by itself. */
async function read(response: Response, ms: number): Promise<{ bytes: Buffer; ended: boolean }> {
  const reader = response.body!.getReader()
  const chunks: Uint8Array[] = []
  const deadline = Date.now() + ms
  let ended = false
  for (;;) {
    const left = deadline - Date.now()
    if (left <= 0) break
    const next = await Promise.race([reader.read(), new Promise<null>((resolve) => setTimeout(() => resolve(null), left))])
    if (next === null) break
    if (next.done) {
      ended = true
      break
    }
    chunks.push(next.value)
  }
  if (!ended) await reader.cancel().catch(() => undefined)
  return { bytes: Buffer.concat(chunks), ended }
}

test.override('deviceOptions', { env: { LIVE_IDLE_TIMEOUT_MS: String(IDLE_MS), LIVE_MAX_VIEWERS_PER_CAMERA: String(MAX_VIEWERS) } })

test.describe('live view (spec 4.10 Live stream)', () => {
  let dir: string
  let rtsp: RtspServer
  let device: DeviceProcess
  let mtk: string
  let cameraId: string
  const post = (route: string, body: unknown) => device.post(route, body, mtk)
  const firstError = (body: any) => body.resMsg[0]
  const ffmpegs = () => childProcesses(device.process.pid!, 'ffmpeg').length

  test.beforeAll(async ({ device: started, mtk: session }) => {
    dir = mkdtempSync(path.join(tmpdir(), 'live-test-'))
    rtsp = await startRtspServer(PERSON_VIDEO, await freePort())
    device = started
    mtk = session
    cameraId = await addRtspCamera(device, mtk, rtsp.url)
  })
  test.afterAll(async () => {
    await rtsp?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  test('refuses an unknown camera, a camera without a stream to copy and a malformed request', async () => {
    expect(firstError((await post('/gtw/cwai/LiveStream/request', { cameraId: 'nope' })).body).messageKey).toBe('api.error.CameraNotFound')
    const http = await post('/gtw/cwai/Camera/add', { cameraName: 'snapshot', sourceType: 'http', url: 'http://127.0.0.1:9/snap.jpg', verify: false })
    expect(firstError((await post('/gtw/cwai/LiveStream/request', { cameraId: http.body.resData.cameraId })).body))
      .toMatchObject({ messageKey: 'api.error.StreamSourceUnsupported', details: { sourceType: 'http' } })
    expect((await post('/gtw/cwai/Camera/delete', { cameraId: http.body.resData.cameraId })).body.resCode).toBe(1)
    for (const bad of [{}, { cameraId, overlay: 'yes' }, { cameraId, extra: 1 }])
      expect(firstError((await post('/gtw/cwai/LiveStream/request', bad)).body).messageKey, JSON.stringify(bad)).toBe('api.error.InvalidParam')
    for (const route of ['keepAlive', 'stop'])
      expect(firstError((await post(`/gtw/cwai/LiveStream/${route}`, { sessionId: '00000000-0000-4000-8000-000000000000' })).body).messageKey).toBe('api.error.LiveSessionNotFound')
    // Only the camera's own reader runs: nothing was started for the refused requests.
    expect(ffmpegs()).toBe(1)
  })

  test('streams fragmented MP4 that starts on a key frame and decodes; the URL works with its token only, for its session only', async () => {
    const session = (await post('/gtw/cwai/LiveStream/request', { cameraId })).body.resData
    expect(session).toMatchObject({ cameraId, overlayUrl: null, idleTimeoutMs: IDLE_MS, mimeType: expect.stringMatching(/^video\/mp4; codecs="avc1\.4d40[0-9a-f]{2}"$/) })
    expect(session.url).toMatch(new RegExp(`^/gtw/cwai/LiveStream/play\\?id=${session.sessionId}&token=[\\w-]{43}$`))
    const response = await fetch(device.url + session.url)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('video/mp4')
    const { bytes, ended } = await read(response, 3000)
    expect(ended).toBe(false)
    // ftyp, moov, then fragments.
    expect(bytes.toString('latin1', 4, 8)).toBe('ftyp')
    expect(bytes.includes(Buffer.from('moof'))).toBe(true)
    const file = path.join(dir, 'live.mp4')
    writeFileSync(file, bytes)
    // ffprobe decodes every frame: the stream starts at a key frame (a decodable picture first) and is the camera's H.264 as it is.
    const probed = probe(file)
    expect(probed).toMatchObject({ codec: 'h264', width: 768, height: 432 })
    expect(probed.frames).toBeGreaterThanOrEqual(20)
    expect(keyFrames(file)).toBeGreaterThanOrEqual(2)
    const firstFrame = execFileSync('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-read_intervals', '%+#1', '-show_entries', 'frame=key_frame', '-of', 'csv=p=0', file], { encoding: 'utf8' }).trim()
    expect(firstFrame).toBe('1')

    // The session lives IDLE_MS after its last keep-alive.
    expect((await post('/gtw/cwai/LiveStream/keepAlive', { sessionId: session.sessionId })).body.resCode).toBe(1)
    // Without a token: 401; with another session's id or an altered token: 401; with an mtk: the stream.
    const url = new URL(session.url, device.url)
    const token = url.searchParams.get('token')!
    expect((await fetch(`${device.url}/gtw/cwai/LiveStream/play?id=${session.sessionId}`)).status).toBe(401)
    expect((await fetch(`${device.url}/gtw/cwai/LiveStream/play?id=00000000-0000-4000-8000-000000000000&token=${token}`)).status).toBe(401)
    expect((await fetch(`${device.url}/gtw/cwai/LiveStream/overlay?id=${session.sessionId}&token=${token}`)).status).toBe(401)
    const withMtk = await fetch(`${device.url}/gtw/cwai/LiveStream/play?id=${session.sessionId}`, { headers: { mtk } })
    expect(withMtk.status).toBe(200)
    await withMtk.body!.cancel()
    // The session was requested without overlay.
    const overlay = await fetch(`${device.url}/gtw/cwai/LiveStream/overlay?id=${session.sessionId}`, { headers: { mtk } })
    expect((await overlay.json()).resMsg[0]).toMatchObject({ messageKey: 'api.error.LiveSessionNotFound', details: { reason: 'requested without overlay' } })
    expect((await post('/gtw/cwai/LiveStream/stop', { sessionId: session.sessionId })).body.resData).toEqual({ sessionId: session.sessionId, stopped: true })
    // Stopped: the URL no longer works.
    expect((await fetch(device.url + session.url)).status).toBe(401)
  })

  test('one upstream connection however many viewers; a bounded number of viewers per camera with a clear error past it', async () => {
    const sessions = []
    for (let i = 0; i < MAX_VIEWERS; i++) sessions.push((await post('/gtw/cwai/LiveStream/request', { cameraId })).body.resData)
    const past = await post('/gtw/cwai/LiveStream/request', { cameraId })
    expect(past.status).toBe(429)
    expect(firstError(past.body)).toMatchObject({ messageKey: 'api.error.LiveViewerLimit', retryable: true, details: { scope: 'camera', cameraId, limit: MAX_VIEWERS } })
    const first = read(await fetch(device.url + sessions[0].url), 6000)
    // The second viewer joins the running stream 3 s later: its stream starts at 0 all the same (a player starts there).
    await new Promise((resolve) => setTimeout(resolve, 3000))
    for (const s of sessions) expect((await post('/gtw/cwai/LiveStream/keepAlive', { sessionId: s.sessionId })).body.resCode).toBe(1)
    const second = await read(await fetch(device.url + sessions[1].url), 2500)
    // The camera's reader and one live ffmpeg for both viewers.
    expect(ffmpegs()).toBe(2)
    for (const { bytes } of [await first, second]) expect(bytes.length).toBeGreaterThan(10_000)
    const joined = path.join(dir, 'joined.mp4')
    writeFileSync(joined, second.bytes)
    const startTime = Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=start_time', '-of', 'csv=p=0', joined], { encoding: 'utf8' }))
    expect(startTime).toBeLessThan(0.5)
    for (const s of sessions) await post('/gtw/cwai/LiveStream/stop', { sessionId: s.sessionId })
    // The last session gone, the upstream stops.
    await until(async () => ffmpegs() === 1, 'the live ffmpeg to stop')
    expect((await post('/gtw/cwai/LiveStream/request', { cameraId })).body.resCode).toBe(1)
  })

  test('keep-alive extends a session; without it the stream ends after the idle timeout; stop ends it at once', { timeout: 60_000 }, async () => {
    // The session of the test before expires by itself.
    await until(async () => ffmpegs() === 1, 'the previous session to expire', 20_000)
    const kept = (await post('/gtw/cwai/LiveStream/request', { cameraId })).body.resData
    const response = await fetch(device.url + kept.url)
    const reading = read(response, 30_000)
    // Keep-alives for twice the idle timeout: the stream goes on.
    for (let i = 0; i < 8; i++) {
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS / 4))
      const alive = await post('/gtw/cwai/LiveStream/keepAlive', { sessionId: kept.sessionId })
      expect(alive.body.resData).toMatchObject({ sessionId: kept.sessionId, url: kept.url })
      expect(alive.body.resData.expiresAt).toBeGreaterThan(kept.expiresAt)
    }
    // Then none: it ends by itself (within the 30 s read), the session is gone and the upstream stops.
    const { ended, bytes } = await reading
    expect(ended).toBe(true)
    expect(bytes.length).toBeGreaterThan(50_000)
    expect(firstError((await post('/gtw/cwai/LiveStream/keepAlive', { sessionId: kept.sessionId })).body)).toMatchObject({ messageKey: 'api.error.LiveSessionNotFound' })
    await until(async () => ffmpegs() === 1, 'the live ffmpeg to stop')

    // Stop: the stream ends long before its idle timeout would end it (the read gives up then).
    const stopped = (await post('/gtw/cwai/LiveStream/request', { cameraId })).body.resData
    const stream = read(await fetch(device.url + stopped.url), IDLE_MS - 1000)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect((await post('/gtw/cwai/LiveStream/stop', { sessionId: stopped.sessionId })).body.resCode).toBe(1)
    expect((await stream).ended).toBe(true)
  })

  test('overlay: Server-Sent Events with the boxes of the camera\'s stream task', { timeout: 120_000 }, async () => {
    expect((await post('/v1/cwai/aihost/TaskCreate', { taskId: 'people', algorithmCode: 'person-detector', cameraId, targetFps: 5, motionGating: false })).body.resCode).toBe(1)
    const session = (await post('/gtw/cwai/LiveStream/request', { cameraId, overlay: true })).body.resData
    expect(session.overlayUrl).toMatch(new RegExp(`^/gtw/cwai/LiveStream/overlay\\?id=${session.sessionId}&token=[\\w-]{43}$`))
    const keepAlive = setInterval(() => void post('/gtw/cwai/LiveStream/keepAlive', { sessionId: session.sessionId }), IDLE_MS / 4)
    // The session's video is read beside: results then say where their frame is in it (mediaTime).
    const video = await fetch(device.url + session.url)
    const playing = read(video, 100_000)
    const response = await fetch(device.url + session.overlayUrl)
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    const results: any[] = []
    // Until a result with a person (the footage has someone in the room most of the time).
    const deadline = Date.now() + 100_000
    const moving = () => results.some((r) => r.objects.some((o: any) => o.velocity))
    while (!(results.some((r) => r.objects.length > 0) && moving() && results.filter((r) => r.mediaTime !== null).length >= 3) && Date.now() < deadline) {
      const { value, done } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
      const events = text.split('\n\n')
      text = events.pop()!
      for (const e of events) if (e.startsWith('data: ')) results.push(JSON.parse(e.slice(6)))
    }
    await reader.cancel()
    clearInterval(keepAlive)
    expect(results.length).toBeGreaterThan(1)
    for (const r of results) expect(r).toMatchObject({ taskId: 'people', width: 768, height: 432, time: expect.any(Number), pts: expect.any(Number) })
    // pts: when the device received the frame, before the task decoded it (time), by less than the decoder's queue.
    for (const r of results) expect(r.time - r.pts).toBeGreaterThanOrEqual(0)
    for (const r of results) expect(r.time - r.pts).toBeLessThan(2000)
    // mediaTime: the frame's place in the video being read, on the same time line as pts (seconds).
    const placed = results.filter((r) => r.mediaTime !== null)
    expect(placed.length).toBeGreaterThanOrEqual(3)
    // The video starts at the key frame before the session's first frame (a result of a frame
    // before it is at a negative time), and has been read for less than the test's 100 s.
    expect(placed.at(-1).mediaTime).toBeGreaterThan(0)
    for (const r of placed) expect(r.mediaTime).toBeGreaterThan(-10)
    for (const r of placed) expect(r.mediaTime).toBeLessThan(100)
    for (let i = 1; i < placed.length; i++) expect((placed[i].mediaTime - placed[0].mediaTime) * 1000).toBeCloseTo(placed[i].pts - placed[0].pts, 0)
    // Each result newer than the one before.
    for (let i = 1; i < results.length; i++) expect(results[i].time).toBeGreaterThan(results[i - 1].time)
    const seen = results.find((r) => r.objects.length > 0)
    expect(seen.objects[0]).toMatchObject({ label: 'person', confidence: expect.any(Number), box: { x: expect.any(Number), y: expect.any(Number), width: expect.any(Number), height: expect.any(Number) } })
    expect(seen.objects[0].box.x + seen.objects[0].box.width).toBeLessThanOrEqual(768)
    // A person the tracker has seen twice says how his box moves: a walker's pace, well under the picture's width a second.
    const velocities = results.flatMap((r) => r.objects.flatMap((o: any) => (o.velocity ? [o.velocity] : [])))
    expect(velocities.length).toBeGreaterThan(0)
    for (const v of velocities) expect(Math.hypot(v.x, v.y)).toBeLessThan(768)
    await post('/gtw/cwai/LiveStream/stop', { sessionId: session.sessionId })
    expect((await playing).bytes.length).toBeGreaterThan(0)
    await post('/v1/cwai/aihost/TaskCancle', { taskId: 'people' })
  })
})
