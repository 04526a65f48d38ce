import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer as createHttpServer, type Server } from 'node:http'
import { createConnection, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net'
import path from 'node:path'
import sharp from 'sharp'
import { expect } from 'vitest'
import { addRtspCamera } from '../helpers/cameras.ts'
import { closedPort, freePort, startDevice, type DeviceProcess } from '../helpers/device.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { startRtspServer, type RtspServer } from '../helpers/rtsp-server.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { childProcesses, isAlive as alive, until } from '../helpers/processes.ts'
import { FFMPEG, PERSON_VIDEO, videoFacts } from '../helpers/video.ts'

const VIDEO = PERSON_VIDEO
const PASSWORD = 's3cret-Cam'
const WRONG_PASSWORD = 'wrong-Cam-pw'
const CONNECT_TIMEOUT_MS = 6000
const DEVICE_ENV = { CAMERA_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS), CAMERA_STALL_TIMEOUT_MS: '4000', CAMERA_RECONNECT_MIN_MS: '500', CAMERA_RECONNECT_MAX_MS: '1000' }

const ffmpegChildren = (pid: number) => childProcesses(pid, 'ffmpeg')

const jpegFrom = (picture: string) => {
  expect(picture.startsWith('data:image/jpeg;base64,')).toBe(true)
  return Buffer.from(picture.slice('data:image/jpeg;base64,'.length), 'base64')
}

test.override('deviceOptions', { env: DEVICE_ENV })

test.describe('cameras over HTTP with real ffmpeg and an RTSP server on loopback', () => {
  const facts = videoFacts(VIDEO)
  let device: DeviceProcess
  let mtk: string
  let rtspPort: number
  let rtsp: RtspServer
  let snapshot: Server
  let snapshotUrl: string
  let snapshotJpeg: Buffer
  const snapshotAuth: (string | undefined)[] = []
  let silent: TcpServer
  const silentSockets: Socket[] = []
  let silentPort: number
  const call = (route: string, body: unknown = {}) => device.post(`/gtw/cwai/Camera/${route}`, body, mtk)
  const rowOf = async (cameraId: string) =>
    (await call('page', { pageNum: 1, pageSize: 100 })).body.resData.rows.find((r: any) => r.cameraId === cameraId)
  const eventsOf = async (kind: string, cameraId: string) =>
    (await device.post('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 100, kinds: [kind] }, mtk)).body.resData.rows
      .filter((e: any) => e.payload.cameraId === cameraId)
  const firstError = (body: any) => body.resMsg[0]

  test.beforeAll(async ({ device: started, mtk: session }) => {
    rtspPort = await freePort()
    rtsp = await startRtspServer(VIDEO, rtspPort, '/cam', `cam-user:${PASSWORD}`)
    snapshotJpeg = execFileSync(FFMPEG, ['-v', 'error', '-ss', '3', '-i', VIDEO, '-frames:v', '1', '-f', 'mjpeg', 'pipe:1'])
    snapshot = createHttpServer((request, response) => {
      snapshotAuth.push(request.headers.authorization)
      const expected = `Basic ${Buffer.from(`cam-user:${PASSWORD}`).toString('base64')}`
      if (request.url === '/text') return response.writeHead(200, { 'content-type': 'text/plain' }).end('not a picture')
      if (request.url !== '/snap.jpg' && request.url !== '/mjpeg') return response.writeHead(404).end()
      if (request.headers.authorization !== expected) return response.writeHead(401, { 'www-authenticate': 'Basic realm="cam"' }).end()
      if (request.url === '/snap.jpg') return response.writeHead(200, { 'content-type': 'image/jpeg' }).end(snapshotJpeg)
      // An MJPEG stream: the same picture 5 times a second until the client goes away.
      response.writeHead(200, { 'content-type': 'multipart/x-mixed-replace; boundary=frame' })
      const send = () => response.write(Buffer.concat([
        Buffer.from(`--frame\r\nContent-Type: image/jpeg\r\nContent-Length: ${snapshotJpeg.length}\r\n\r\n`), snapshotJpeg, Buffer.from('\r\n'),
      ]))
      send()
      const timer = setInterval(send, 200)
      request.socket.once('close', () => clearInterval(timer))
    })
    await new Promise<void>((resolve) => snapshot.listen(0, '127.0.0.1', resolve))
    snapshotUrl = `http://127.0.0.1:${(snapshot.address() as { port: number }).port}`
    // Accepts connections and never answers: a host that hangs.
    silent = createTcpServer((socket) => { silentSockets.push(socket) })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    silentPort = (silent.address() as { port: number }).port
    device = started
    mtk = session
  })
  test.afterAll(async () => {
    // The device the last test restarts on the same data folder, if it still runs (the fixture stops the first one and removes the folder).
    await device?.stop()
    await rtsp?.stop()
    snapshot?.close()
    for (const socket of silentSockets) socket.destroy()
    silent?.close()
  })

  let rtspCamera: string

  test('adds an RTSP camera: online at the source\'s size and rate, the password shown as ***, capture a JPEG of that size', async () => {
    expect(facts).toEqual({ width: 768, height: 432, fps: 10 })
    // A just-started RTSP server can refuse the first session while it prepares the media: retried as the device advises.
    rtspCamera = await addRtspCamera(device, mtk, `rtsp://cam-user:${PASSWORD}@127.0.0.1:${rtspPort}/cam`, 'door')
    const page = await call('page', { pageNum: 1, pageSize: 10, cameraName: 'doo' })
    expect(page.body.resData.total).toBe(1)
    expect(page.body.resData.rows[0]).toMatchObject({
      cameraId: rtspCamera, cameraName: 'door', sourceType: 'rtsp', status: 'online', lastError: null,
      url: `rtsp://cam-user:***@127.0.0.1:${rtspPort}/cam`, username: 'cam-user', width: facts.width, height: facts.height, fps: facts.fps,
    })
    expect(JSON.stringify(page.body)).not.toContain(PASSWORD)

    const before = Date.now()
    const capture = await call('capture', { cameraId: rtspCamera })
    expect(capture.body.resCode).toBe(1)
    expect(capture.body.resData).toMatchObject({ width: facts.width, height: facts.height })
    expect(Number(capture.body.resData.timestamp)).toBeGreaterThan(before - 5000)
    const jpeg = jpegFrom(capture.body.resData.picture)
    expect(jpeg.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]))
    expect(await sharp(jpeg).metadata()).toMatchObject({ format: 'jpeg', width: facts.width, height: facts.height })

    const online = await until(async () => (await eventsOf('camera.online', rtspCamera))[0], 'camera.online')
    expect(online.payload).toMatchObject({ cameraId: rtspCamera, cameraName: 'door', width: facts.width, height: facts.height, fps: facts.fps })
  })

  test('refuses a source with a distinct error key for each cause, stores nothing, never answers 500', async () => {
    const cases: [unknown, string][] = [
      [{ sourceType: 'rtsp', url: `rtsp://cam-user:${WRONG_PASSWORD}@127.0.0.1:${rtspPort}/cam` }, 'api.error.CameraAuthFailed'],
      [{ sourceType: 'rtsp', url: `rtsp://127.0.0.1:${rtspPort}/cam` }, 'api.error.CameraAuthFailed'],
      [{ sourceType: 'rtsp', url: `rtsp://127.0.0.1:${rtspPort}/nothing-here`, username: 'cam-user', password: PASSWORD }, 'api.error.CameraStreamNotFound'],
      [{ sourceType: 'rtsp', url: `rtsp://127.0.0.1:${await closedPort()}/cam` }, 'api.error.CameraUnreachable'],
      [{ sourceType: 'rtsp', url: `rtsp://127.0.0.1:${silentPort}/cam` }, 'api.error.CameraUnreachable'],
      [{ sourceType: 'rtsp', url: 'rtsp://no-such-host.invalid/cam' }, 'api.error.CameraUnreachable'],
      [{ sourceType: 'rtsp', url: '/etc/passwd' }, 'api.error.CameraUrlInvalid'],
      [{ sourceType: 'rtsp', url: 'file:///etc/passwd' }, 'api.error.CameraUrlInvalid'],
      [{ sourceType: 'rtsp', url: `${snapshotUrl}/snap.jpg` }, 'api.error.CameraUrlInvalid'],
      [{ sourceType: 'http', url: 'concat:/etc/passwd' }, 'api.error.CameraUrlInvalid'],
      [{ sourceType: 'rtsp' }, 'api.error.CameraUrlInvalid'],
      [{ sourceType: 'usb', device: '/etc/passwd' }, 'api.error.CameraUrlInvalid'],
      [{ sourceType: 'file', url: `rtsp://127.0.0.1:${rtspPort}/cam` }, 'api.error.CameraUrlInvalid'],
      [{ sourceType: 'http', url: `${snapshotUrl}/text` }, 'api.error.CameraUnsupportedCodec'],
      [{ sourceType: 'http', url: `${snapshotUrl}/snap.jpg`, username: 'cam-user', password: WRONG_PASSWORD }, 'api.error.CameraAuthFailed'],
      [{ sourceType: 'http', url: `${snapshotUrl}/missing.jpg` }, 'api.error.CameraStreamNotFound'],
    ]
    for (const [source, key] of cases) {
      const started = Date.now()
      const { status, body } = await call('add', { cameraName: 'bad', ...(source as object) })
      expect(status, JSON.stringify(source)).toBe(200)
      expect(body.resCode).toBe(0)
      expect(body.resMsg[0].messageKey, `${JSON.stringify(source)} → ${body.resMsg[0].msgText}`).toBe(key)
      // A silent host is given up after the connect timeout.
      expect(Date.now() - started).toBeLessThan(CONNECT_TIMEOUT_MS + 3000)
      expect(JSON.stringify(body)).not.toContain(WRONG_PASSWORD)
    }
    const badUpload = await uploadFile(device, mtk, Buffer.from('not a video at all\n'.repeat(100)), 'notes.mp4', 'video')
    const notVideo = await call('add', { cameraName: 'bad', sourceType: 'file', uploadId: badUpload })
    expect(firstError(notVideo.body).messageKey).toBe('api.error.CameraUnsupportedCodec')
    const page = await call('page', { pageNum: 1, pageSize: 100 })
    expect(page.body.resData.rows.map((r: any) => r.cameraName)).toEqual(['door'])
  })

  test('adds an HTTP snapshot camera with credentials: online at the picture\'s size, capture of it', async () => {
    snapshotAuth.length = 0
    const added = await call('add', { cameraName: 'snap', sourceType: 'http', url: `${snapshotUrl}/snap.jpg`, username: 'cam-user', password: PASSWORD })
    expect(added.body.resCode).toBe(1)
    const cameraId = added.body.resData.cameraId
    expect(await rowOf(cameraId)).toMatchObject({ status: 'online', width: facts.width, height: facts.height, url: `${snapshotUrl.replace('http://', 'http://cam-user:***@')}/snap.jpg`, username: 'cam-user' })
    const capture = await call('capture', { cameraId })
    expect(capture.body.resData).toMatchObject({ width: facts.width, height: facts.height })
    expect(await sharp(jpegFrom(capture.body.resData.picture)).metadata()).toMatchObject({ width: facts.width, height: facts.height })
    expect(snapshotAuth.length).toBeGreaterThan(0)
    expect(new Set(snapshotAuth)).toEqual(new Set([`Basic ${Buffer.from(`cam-user:${PASSWORD}`).toString('base64')}`]))
  })

  test('adds an HTTP MJPEG camera (multipart/x-mixed-replace), read by ffmpeg with the credentials', async () => {
    const added = await call('add', { cameraName: 'mjpeg', sourceType: 'http', url: `http://cam-user:${PASSWORD}@${snapshotUrl.slice('http://'.length)}/mjpeg` })
    expect(added.body.resCode).toBe(1)
    const cameraId = added.body.resData.cameraId
    expect(await rowOf(cameraId)).toMatchObject({ status: 'online', width: facts.width, height: facts.height, username: 'cam-user' })
    const readers = ffmpegChildren(device.process.pid!)
    expect(readers).toHaveLength(2)
    // The credentials reach the RTSP and MJPEG readers through the relay, never their command
    // line (world-readable in /proc); the relay's ticket in it is useless to anyone else.
    const commandLines = readers.map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'))
    for (const argv of commandLines) {
      expect(argv.join(' ')).not.toContain(PASSWORD)
      expect(argv.join(' ')).not.toContain(encodeURIComponent(PASSWORD))
    }
    const inputs = commandLines.map((argv) => argv[argv.indexOf('-i') + 1]!).sort()
    expect(inputs).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/[\w-]+$/), expect.stringMatching(/^rtsp:\/\/127\.0\.0\.1:\d+\/[\w-]+$/)])
    for (const input of inputs) {
      const { port, pathname } = new URL(input)
      const request = input.startsWith('rtsp') ? `OPTIONS ${input} RTSP/1.0\r\nCSeq: 1\r\n\r\n` : `GET ${pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`
      const answer = await new Promise<string>((resolve, reject) => {
        let text = ''
        const socket = createConnection({ host: '127.0.0.1', port: Number(port) }, () => socket.write(request))
        socket.on('data', (chunk) => { text += chunk })
        socket.on('end', () => resolve(text))
        socket.on('error', reject)
      })
      expect(answer).toMatch(/^(RTSP\/1\.0|HTTP\/1\.1) 403 Forbidden\r\n/)
      expect(answer).not.toContain('Location')
    }
    const capture = await call('capture', { cameraId })
    expect(await sharp(jpegFrom(capture.body.resData.picture)).metadata()).toMatchObject({ width: facts.width, height: facts.height })
    expect((await call('delete', { cameraId })).body.resCode).toBe(1)
    await until(async () => ffmpegChildren(device.process.pid!).length === 1, 'the MJPEG camera\'s ffmpeg to end')
  })

  let fileCamera: string

  test('adds a file camera from an upload with purpose video, looped at the file\'s own rate', async () => {
    const uploadId = await uploadFile(device, mtk, readFileSync(VIDEO), 'one-by-one.mp4', 'video')
    const added = await call('add', { cameraName: 'recorded', sourceType: 'file', uploadId })
    expect(added.body.resCode).toBe(1)
    fileCamera = added.body.resData.cameraId
    expect(await rowOf(fileCamera)).toMatchObject({
      sourceType: 'file', status: 'online', url: null, videoName: 'one-by-one.mp4', width: facts.width, height: facts.height, fps: facts.fps,
    })
    const capture = await call('capture', { cameraId: fileCamera })
    expect(await sharp(jpegFrom(capture.body.resData.picture)).metadata()).toMatchObject({ width: facts.width, height: facts.height })
    // The upload was consumed by the camera.
    const again = await call('add', { cameraName: 'again', sourceType: 'file', uploadId })
    expect(firstError(again.body).messageKey).toBe('api.error.uploadConsumed')
  })

  test('goes offline when the RTSP server stops (camera.offline with the reason) and online when it comes back', async () => {
    await rtsp.stop()
    const offline = await until(async () => (await eventsOf('camera.offline', rtspCamera))[0], 'camera.offline')
    expect(offline.payload.cameraName).toBe('door')
    expect(['api.error.CameraUnreachable', 'api.error.CameraSourceFailed']).toContain(offline.payload.messageKey)
    const row = await rowOf(rtspCamera)
    expect(row.status).toBe('offline')
    expect(row.lastErrorKey).toBe(offline.payload.messageKey)
    const captured = await call('capture', { cameraId: rtspCamera })
    expect(['api.error.CameraUnreachable', 'api.error.CameraSourceFailed']).toContain(firstError(captured.body).messageKey)

    rtsp = await startRtspServer(VIDEO, rtspPort, '/cam', `cam-user:${PASSWORD}`)
    await until(async () => (await eventsOf('camera.online', rtspCamera)).length === 2, 'the second camera.online')
    expect(await rowOf(rtspCamera)).toMatchObject({ status: 'online', lastError: null, width: facts.width, height: facts.height })
  })

  test('updates a camera: a bad new source is refused and the old one kept; a new name applies', async () => {
    const refused = await call('update', { cameraId: rtspCamera, password: WRONG_PASSWORD })
    expect(firstError(refused.body).messageKey).toBe('api.error.CameraAuthFailed')
    expect(await rowOf(rtspCamera)).toMatchObject({ status: 'online', cameraName: 'door' })
    // An empty password removes it: this server then refuses the camera.
    expect(firstError((await call('update', { cameraId: rtspCamera, password: '' })).body).messageKey).toBe('api.error.CameraAuthFailed')
    // A new URL without credentials keeps the stored ones.
    expect((await call('update', { cameraId: rtspCamera, url: `rtsp://127.0.0.1:${rtspPort}/cam` })).body.resCode).toBe(1)
    expect(await rowOf(rtspCamera)).toMatchObject({ status: 'online', url: `rtsp://cam-user:***@127.0.0.1:${rtspPort}/cam` })
    expect((await call('update', { cameraId: rtspCamera, cameraName: 'front door' })).body.resCode).toBe(1)
    expect((await rowOf(rtspCamera)).cameraName).toBe('front door')
    expect(firstError((await call('update', { cameraId: 'nope', cameraName: 'x' })).body).messageKey).toBe('api.error.CameraNotFound')
  })

  test('lists the V4L2 devices present (none on this machine)', async () => {
    const present = readdirSync('/dev').filter((name) => /^video\d+$/.test(name)).map((name) => `/dev/${name}`)
    const { body } = await call('usbList')
    expect(body.resData.rows.map((r: any) => r.device)).toEqual(present)
  })

  test('never writes a camera password to the log', async () => {
    const logDir = path.join(device.dataDir, 'logs')
    const text = readdirSync(logDir).map((name) => readFileSync(path.join(logDir, name), 'utf8')).join('\n') + JSON.stringify(device.logs)
    expect(text).toContain('camera added')
    expect(text).not.toContain(PASSWORD)
    expect(text).not.toContain(WRONG_PASSWORD)
  })

  test('deleting a camera ends its reader process; the cameras come back after a restart and a stop ends them all', async () => {
    const readers = ffmpegChildren(device.process.pid!)
    // rtsp and file cameras each run one ffmpeg; the snapshot camera polls over HTTP without one.
    expect(readers).toHaveLength(2)
    expect((await call('delete', { cameraId: fileCamera })).body.resCode).toBe(1)
    await until(async () => ffmpegChildren(device.process.pid!).length === 1, 'the file camera\'s ffmpeg to end')
    expect(readers.filter(alive)).toHaveLength(1)
    expect(readdirSync(path.join(device.dataDir, 'cameras'))).toEqual([])
    expect(firstError((await call('capture', { cameraId: fileCamera })).body).messageKey).toBe('api.error.CameraNotFound')
    expect(firstError((await call('delete', { cameraId: fileCamera })).body).messageKey).toBe('api.error.CameraNotFound')

    // A restart resumes the stored cameras; a stop ends their readers with the device.
    await device.stop()
    expect(readers.filter(alive)).toEqual([])
    // The same camera timings as before: a first attempt that fails (a busy RTSP server) is retried within a second.
    device = await startDevice({ dataDir: device.dataDir, env: DEVICE_ENV })
    mtk = await device.adminToken()
    await until(async () => (await rowOf(rtspCamera))?.status === 'online', 'the RTSP camera online after the restart')
    const after = ffmpegChildren(device.process.pid!)
    expect(after).toHaveLength(1)
    expect((await call('page', { pageNum: 1, pageSize: 10 })).body.resData.total).toBe(2)
    await device.stop()
    expect(after.filter(alive)).toEqual([])
  })
})
