import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { startDevice, type DeviceProcess } from '../helpers/device.ts'
import { samplePath } from './helpers.ts'
import { pngBombHeader } from './images.ts'

const sample1 = readFileSync(samplePath(1))
const b64 = (bytes: Buffer) => bytes.toString('base64')
const targets = (resData: any) => resData.areaList.flatMap((a: any) => a.targetList)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A large, highly compressible PNG: slow to decode and draw, tiny as Base64 (keeps an inference running). */
let slow: Promise<string> | null = null
const slowImage = () => (slow ??= sharp({ create: { width: 6000, height: 6000, channels: 3, background: '#808080' } }).png().toBuffer().then(b64))

// The image server is on loopback, which IMAGE_URL_BLOCKED_NETWORKS refuses by default.
test.override('deviceOptions', { env: { IMAGE_URL_BLOCKED_NETWORKS: '169.254.0.0/16,fe80::/10' } })

test.describe('typical image-detection flow over HTTP (spec 1) with the real sidecar', () => {
  let device: DeviceProcess
  let mtk: string
  let imageServer: http.Server
  let imageBase: string
  const create = (body: Record<string, unknown>, prefix = '/gtw') => device.post(`${prefix}/cwai/aihost/PTaskCreate`, { algorithmUpdateTime: String(Date.now()), mvDebug: 'debug', ...body }, mtk)
  const detect = (body: Record<string, unknown>, prefix = '/gtw') => device.post(`${prefix}/cwai/aihost/PTaskDetectPic`, body, mtk)
  const cancel = (body: Record<string, unknown>, prefix = '/gtw') => device.post(`${prefix}/cwai/aihost/PTaskCancle`, { mvDebug: 'debug', ...body }, mtk)
  /** spec 4.5: one single-chunk uploadTemp of `data`; returns the uploadId. */
  const upload = async (data: Buffer, purpose = 'image') => {
    const form = new FormData()
    const fields = { purpose, chunkIndex: 0, totalChunks: 1, totalSize: data.length, chunkSize: data.length, clientRequestId: randomUUID() }
    for (const [name, value] of Object.entries(fields)) form.append(name, String(value))
    form.append('file', new Blob([new Uint8Array(data)]), 'photo.jpg')
    const response = await fetch(`${device.url}/gtw/cwai/atomic/model/uploadTemp`, { method: 'POST', headers: { mtk }, body: form })
    const body = await response.json() as any
    if (body.resCode !== 1 || body.resData.complete !== true) throw new Error(JSON.stringify(body))
    return body.resData.uploadId as string
  }
  const sidecarPid = () => [...device.logs].reverse().find((l) => l.msg === 'inference sidecar ready')?.pid as number
  /** The pid of the sidecar that runs now: the supervisor's last word on it is "ready", not "exited". */
  const runningSidecarPid = async () => {
    for (;;) {
      const last = [...device.logs].reverse().find((l) => l.msg === 'inference sidecar ready' || l.msg === 'inference sidecar exited; restarting')
      if (last?.msg === 'inference sidecar ready') return last.pid as number
      await sleep(50)
    }
  }
  /** When a process started (epoch ms, to a second: the boot time is in whole seconds): its start in clock ticks after boot (proc(5), field 22) plus the boot time. */
  const startedAtMs = (pid: number) => {
    const ticks = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[19])
    const bootSeconds = Number(readFileSync('/proc/stat', 'utf8').match(/^btime (\d+)$/m)![1])
    return (bootSeconds + ticks / 100) * 1000
  }
  /**
   * Starts a detection and kills the sidecar while it holds the request: the sidecar is stopped
   * first, so the detection cannot finish before the kill however fast the machine is.
   */
  const detectThroughKilledSidecar = async (body: Record<string, unknown>) => {
    const pid = await runningSidecarPid()
    process.kill(pid, 'SIGSTOP')
    const running = detect(body)
    await sleep(400)
    process.kill(pid, 'SIGKILL')
    return { failed: await running, pid }
  }

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    imageServer = http.createServer((req, res) => {
      if (req.url === '/face.jpg') { res.writeHead(200, { 'content-type': 'image/jpeg' }); res.end(sample1); return }
      if (req.url === '/to-file') { res.writeHead(302, { location: 'file:///etc/passwd' }); res.end(); return }
      if (req.url === '/hop') { res.writeHead(301, { location: '/face.jpg' }); res.end(); return }
      if (req.url === '/huge.jpg') { res.on('error', () => {}); res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': 40 * 1024 * 1024 }); res.end(Buffer.alloc(40 * 1024 * 1024)); return }
      // No declared length: the download counts what arrives.
      if (req.url === '/huge-chunked.jpg') { res.on('error', () => {}); res.writeHead(200, { 'content-type': 'image/jpeg' }); res.end(Buffer.alloc(40 * 1024 * 1024)); return }
      res.writeHead(404); res.end()
    })
    await new Promise<void>((r) => imageServer.listen(0, '127.0.0.1', r))
    imageBase = `http://127.0.0.1:${(imageServer.address() as AddressInfo).port}`
  })
  test.afterAll(async () => {
    imageServer?.close()
  })

  test('algorithm/page: filters, paging, total and rows (spec 4.2, 2.3)', async () => {
    const all = await device.post('/gtw/cwai/algorithm/page', { algorithmUsage: '2', algorithmName: '', supplier: '', algorithmId: '', algorithmCategory: '', pageNum: 1, pageSize: 10 }, mtk)
    expect(all.body.resCode).toBe(1)
    expect(all.body.resData.total).toBe(12)
    const ids = all.body.resData.rows.map((r: any) => r.algorithmId)
    expect(ids).toEqual(['body-recognition', 'face-analysis', 'face-detection', 'face-detection-near', 'face-presence', 'face-recognition', 'no-safety-helmet-analysis', 'object-detection', 'person-detector', 'person-segmentation'])
    expect(all.body.resData.rows[2]).toMatchObject({ algorithmId: 'face-detection', algorithmUsage: '2', runningStatus: 0, models: [expect.objectContaining({ format: 'onnx' })] })
    const page3 = await device.post('/gtw/cwai/algorithm/page', { algorithmUsage: '2', pageNum: 3, pageSize: 4 }, mtk)
    expect(page3.body.resData).toMatchObject({ total: 12, rows: [{ algorithmId: 'person-detector' }, { algorithmId: 'person-segmentation' }, { algorithmId: 'text-ocr' }, { algorithmId: 'things-recognition' }] })
    const byCategory = await device.post('/gtw/cwai/algorithm/page', { algorithmCategory: 'text', pageNum: 1, pageSize: 10 }, mtk)
    expect(byCategory.body.resData.rows.map((r: any) => r.algorithmId)).toEqual(['text-ocr'])
    const byName = await device.post('/gtw/cwai/algorithm/page', { algorithmName: 'presence', pageNum: 1, pageSize: 10 }, mtk)
    expect(byName.body.resData).toMatchObject({ total: 1, rows: [{ algorithmId: 'face-presence' }] })
    const none = await device.post('/gtw/cwai/algorithm/page', { algorithmUsage: '1', pageNum: 1, pageSize: 10 }, mtk)
    expect(none.body.resData).toEqual({ total: 0, rows: [] })
    const bad = await device.post('/gtw/cwai/algorithm/page', { pageNum: 0, pageSize: 10 }, mtk)
    expect(bad.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/pageNum' } })
  })

  test('typical flow with an upload: uploadId consumed by a successful detection, kept by a NotCreated or failed one', async () => {
    const taskId = randomUUID()
    expect((await create({ taskId, algorithmCode: 'face-detection' })).body.resCode).toBe(1)
    const uploadId = await upload(readFileSync(samplePath(5)))
    // A detection that never starts (task not created) does not consume the upload.
    const notCreated = await detect({ taskId: randomUUID(), algorithmCode: 'face-detection', uploadId })
    expect(notCreated.body.resMsg[0].messageKey).toBe('api.error.NotCreated')
    const result = await detect({ taskId, algorithmCode: 'face-detection', uploadId })
    expect(result.body.resCode).toBe(1)
    expect(targets(result.body.resData)).toHaveLength(5)
    // spec 3.1: consumed, cannot be reused for another detection.
    const again = await detect({ taskId, algorithmCode: 'face-detection', uploadId })
    expect(again.body.resMsg[0].messageKey).toBe('api.error.uploadConsumed')
    const unknown = await detect({ taskId, algorithmCode: 'face-detection', uploadId: randomUUID() })
    expect(unknown.body.resMsg[0].messageKey).toBe('api.error.uploadNotFound')
    const model = await upload(readFileSync(samplePath(1)), 'model')
    expect((await detect({ taskId, algorithmCode: 'face-detection', uploadId: model })).body.resMsg[0].messageKey).toBe('api.error.uploadPurposeMismatch')
    // An uploaded file that is no image → ImageDecodeFailed.
    const junk = await upload(Buffer.from('definitely not an image'))
    expect((await detect({ taskId, algorithmCode: 'face-detection', uploadId: junk })).body.resMsg[0].messageKey).toBe('api.error.ImageDecodeFailed')
    // spec 4.7: only a successful claim consumes: the failed detection left the upload complete.
    expect((await detect({ taskId, algorithmCode: 'face-detection', uploadId: junk })).body.resMsg[0].messageKey).toBe('api.error.ImageDecodeFailed')
    expect((await cancel({ taskId, algorithmCode: 'face-detection' })).body.resCode).toBe(1)
  })

  test('text algorithm over HTTP: lines as maskPolygon, words as labels', async () => {
    const taskId = randomUUID()
    expect((await create({ taskId, algorithmCode: 'text-ocr' })).body.resCode).toBe(1)
    const png = await sharp(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="600" height="150"><rect width="100%" height="100%" fill="white"/><text x="30" y="90" font-family="DejaVu Sans" font-size="48">Gate 42 open</text></svg>')).png().toBuffer()
    const result = await detect({ taskId, algorithmCode: 'text-ocr', imageBase64: b64(png) })
    expect(result.body.resCode).toBe(1)
    const [line, ...rest] = targets(result.body.resData)
    expect(rest).toEqual([])
    expect(line.confidence.map((c: any) => c.label.replace(/\s/g, ''))).toEqual(['text', 'Gate42open'])
    expect(line.maskPolygon).toHaveLength(4)
    expect(line.landmark).toEqual([])
    expect((await cancel({ taskId, algorithmCode: 'text-ocr' })).body.resCode).toBe(1)
  })

  test('create → detect (Base64, URL) → cancel, under both prefixes, with the result of spec 2.6', async () => {
    const taskId = randomUUID()
    const created = await create({ taskId, algorithmCode: 'face-detection' }, '/v1')
    expect(created.body).toMatchObject({ resCode: 1, resMsg: [] })
    const result = await detect({ taskId, algorithmCode: 'face-detection', imageBase64: b64(sample1) })
    expect(result.status).toBe(200)
    expect(result.body.resCode).toBe(1)
    const resData = result.body.resData
    expect(Object.keys(resData).sort()).toEqual(['algorithmCode', 'areaList', 'fullPicture', 'timestamp'])
    expect(resData.algorithmCode).toBe('face-detection')
    expect(resData.timestamp).toMatch(/^\d{13}$/)
    expect(resData.fullPicture).toMatch(/^data:image\/jpeg;base64,\/9j\//)
    expect(targets(resData)).toHaveLength(3)
    for (const t of targets(resData)) {
      expect(t.confidence[0].label).toBe('face')
      expect(t.landmark).toHaveLength(6)
      expect(t).not.toHaveProperty('bLogicResult')
    }
    const viaUrl = await detect({ taskId, algorithmCode: 'face-detection', imageUrl: `${imageBase}/hop` }, '/v1')
    expect(viaUrl.body.resCode).toBe(1)
    expect(targets(viaUrl.body.resData)).toEqual(targets(resData))
    expect((await cancel({ taskId, algorithmCode: 'face-detection' })).body.resCode).toBe(1)
  })

  test('a device that has detected leaves no onnxruntime telemetry file in /tmp for its server or sidecar (docs/deployment.md)', async () => {
    const taskId = randomUUID()
    expect((await create({ taskId, algorithmCode: 'face-detection' })).body.resCode).toBe(1)
    expect((await detect({ taskId, algorithmCode: 'face-detection', imageBase64: b64(sample1) })).body.resCode).toBe(1)
    for (const pid of [device.process.pid!, await runningSidecarPid()]) {
      // Process ids are reused: a file left by an earlier process of the same id predates this one.
      const file = path.join(os.tmpdir(), `mat-debug-${pid}.log`)
      const written = existsSync(file) && statSync(file).mtimeMs >= startedAtMs(pid) - 2000
      expect(written, `pid ${pid}`).toBe(false)
    }
    expect((await cancel({ taskId, algorithmCode: 'face-detection' })).body.resCode).toBe(1)
  })

  test('spec 3.2 state table: reuse, default taskId, NotCreated after cancel / mismatch / never created', async () => {
    // (none) → detect: NotCreated
    const never = await detect({ taskId: randomUUID(), algorithmCode: 'face-detection', imageBase64: b64(sample1) })
    expect(never.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.NotCreated', recommendedAction: 'CREATE_TASK' })
    // taskId omitted → defaults to algorithmCode; created again → reused
    expect((await create({ algorithmCode: 'face-presence' })).body.resCode).toBe(1)
    expect((await create({ algorithmCode: 'face-presence' })).body.resCode).toBe(1)
    const shared = await detect({ taskId: 'face-presence', algorithmCode: 'face-presence', imageBase64: b64(sample1) })
    expect(shared.body.resCode).toBe(1)
    // A logic node: bLogicResult on every target, bDetected from the area logic.
    for (const t of targets(shared.body.resData)) expect(typeof t.bLogicResult).toBe('boolean')
    expect(shared.body.resData.areaList[0].bDetected).toBe(true)
    // created + PTaskCreate same taskId → reused, also with another algorithmCode: the task now runs it (README "Tasks")
    expect((await create({ taskId: 'face-presence', algorithmCode: 'face-detection' })).body.resCode).toBe(1)
    const switched = await detect({ taskId: 'face-presence', algorithmCode: 'face-detection', imageBase64: b64(sample1) })
    expect(switched.body.resCode).toBe(1)
    expect(targets(switched.body.resData)).toHaveLength(3)
    for (const t of targets(switched.body.resData)) expect(t).not.toHaveProperty('bLogicResult')
    // mismatched algorithmCode → NotCreated
    const mismatch = await detect({ taskId: 'face-presence', algorithmCode: 'face-presence', imageBase64: b64(sample1) })
    expect(mismatch.body.resMsg[0].messageKey).toBe('api.error.NotCreated')
    expect((await create({ taskId: 'face-presence', algorithmCode: 'face-presence' })).body.resCode).toBe(1)
    expect((await detect({ algorithmCode: 'face-presence', imageBase64: b64(sample1) })).body.resCode).toBe(1)
    // cancel → cancelled; detect → NotCreated; cancel again → NotCreated
    expect((await cancel({ algorithmCode: 'face-presence' })).body.resCode).toBe(1)
    const afterCancel = await detect({ algorithmCode: 'face-presence', imageBase64: b64(sample1) })
    expect(afterCancel.body.resMsg[0].messageKey).toBe('api.error.NotCreated')
    expect((await cancel({ algorithmCode: 'face-presence' })).body.resMsg[0].messageKey).toBe('api.error.NotCreated')
    // created again after the cancel: works
    expect((await create({ algorithmCode: 'face-presence' })).body.resCode).toBe(1)
    expect((await detect({ algorithmCode: 'face-presence', imageBase64: b64(sample1) })).body.resCode).toBe(1)
    expect((await cancel({ algorithmCode: 'face-presence' })).body.resCode).toBe(1)
  })

  test('create errors: unknown algorithm → ActionAlgLoadFailed; bad fields → InvalidParam', async () => {
    const unknown = await create({ taskId: randomUUID(), algorithmCode: 'face' })
    expect(unknown.body).toMatchObject({ resCode: 0, resMsg: [{ messageKey: 'api.error.ActionAlgLoadFailed', details: { algorithmCode: 'face' } }] })
    const noTime = await device.post('/gtw/cwai/aihost/PTaskCreate', { algorithmCode: 'face-detection' }, mtk)
    expect(noTime.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/algorithmUpdateTime' } })
    const badConfig = await create({ taskId: randomUUID(), algorithmCode: 'face-detection', taskConfig: { scoreThreshold: 2 } })
    expect(badConfig.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/taskConfig/scoreThreshold' } })
  })

  test('image-source and image errors of spec 4.7 / 7.1', async () => {
    const taskId = randomUUID()
    await create({ taskId, algorithmCode: 'face-detection' })
    const key = async (body: Record<string, unknown>) => (await detect({ taskId, algorithmCode: 'face-detection', ...body })).body.resMsg[0]
    expect(await key({})).toMatchObject({ messageKey: 'api.error.InvalidParam' })
    expect(await key({ imageBase64: b64(sample1), imageUrl: `${imageBase}/face.jpg` })).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { sources: ['imageBase64', 'imageUrl'] } })
    expect(await key({ imageBase64: `data:image/jpeg;base64,${b64(sample1)}` })).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/imageBase64' } })
    expect(await key({ imageBase64: 'not base64!' })).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/imageBase64' } })
    expect(await key({ imageBase64: b64(sample1.subarray(0, 3000)) })).toMatchObject({ messageKey: 'api.error.ImageDecodeFailed', retryable: false })
    expect(await key({ imageBase64: b64(Buffer.from('plain text, not an image')) })).toMatchObject({ messageKey: 'api.error.ImageDecodeFailed' })
    expect(await key({ imageUrl: `${imageBase}/missing.jpg` })).toMatchObject({ messageKey: 'api.error.ImageDownloadFailed', details: { status: 404 } })
    expect(await key({ imageUrl: `${imageBase}/to-file` })).toMatchObject({ messageKey: 'api.error.ImageDownloadFailed', details: { reason: 'redirect to a non-HTTP scheme' } })
    expect(await key({ imageUrl: 'http://127.0.0.1:1/closed.jpg' })).toMatchObject({ messageKey: 'api.error.ImageDownloadFailed' })
    expect(await key({ imageUrl: 'file:///etc/passwd' })).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/imageUrl' } })
    // spec 7.1: encoded size over maxEncodedImageBytes (32 MB default) and a decompression bomb's header.
    expect(await key({ imageUrl: `${imageBase}/huge.jpg` })).toMatchObject({
      messageKey: 'api.error.imageInputTooLarge', recommendedAction: 'RESIZE_OR_RECOMPRESS_IMAGE',
      details: { actualBytes: 40 * 1024 * 1024, limitBytes: 32 * 1024 * 1024, resource: 'encoded-image', purpose: 'image' },
    })
    const chunked = await key({ imageUrl: `${imageBase}/huge-chunked.jpg` })
    expect(chunked).toMatchObject({ messageKey: 'api.error.imageInputTooLarge', details: { limitBytes: 32 * 1024 * 1024 } })
    expect(chunked.details.actualBytes).toBeGreaterThan(32 * 1024 * 1024)
    expect(await key({ imageBase64: b64(pngBombHeader(100_000, 100_000)) })).toMatchObject({
      messageKey: 'api.error.imageResolutionTooLarge', recommendedAction: 'RESIZE_IMAGE', details: { width: 100_000, height: 100_000 },
    })
    // spec 8: Base64 requests are bound by the 1 MB JSON limit.
    const huge = await detect({ taskId, algorithmCode: 'face-detection', imageBase64: 'A'.repeat(1_100_000) })
    expect(huge.status).toBe(413)
    expect(huge.body.resMsg[0].messageKey).toBe('api.error.httpBodyTooLarge')
    // The task is intact after all of that.
    expect((await detect({ taskId, algorithmCode: 'face-detection', imageBase64: b64(sample1) })).body.resCode).toBe(1)
    await cancel({ taskId, algorithmCode: 'face-detection' })
  })

  test('cancel while an inference runs on the task is refused (retryable); afterwards it succeeds', async () => {
    const taskId = randomUUID()
    // Cancel while the detection holds the task. A cancel that lands before the detection
    // reached the task, or after it finished, succeeds: create the task again, new round.
    let refused: any = null
    for (let round = 0; round < 5 && !refused; round++) {
      await create({ taskId, algorithmCode: 'face-detection' })
      let settled = false
      const running = detect({ taskId, algorithmCode: 'face-detection', imageBase64: await slowImage() }).finally(() => { settled = true })
      await sleep(20)
      let cancelled = false
      while (!settled && !refused && !cancelled) {
        const attempt = await cancel({ taskId, algorithmCode: 'face-detection' })
        if (attempt.body.resMsg[0]?.messageKey === 'api.error.TaskBusy') refused = attempt.body.resMsg[0]
        else if (attempt.body.resCode === 1) cancelled = true
        else await sleep(50)
      }
      const outcome = await running
      if (refused) expect(outcome.body.resCode).toBe(1)
    }
    expect(refused).toMatchObject({ messageKey: 'api.error.TaskBusy', retryable: true, recommendedAction: 'RETRY_LATER' })
    expect((await cancel({ taskId, algorithmCode: 'face-detection' })).body.resCode).toBe(1)
  })

  test('switching a task to another algorithm while an inference runs on it is refused (retryable)', async () => {
    const taskId = randomUUID()
    await create({ taskId, algorithmCode: 'face-detection' })
    // Switch while the detection holds the task. A switch that lands before the detection
    // reached the task, or after it finished, succeeds: switch back and try again in a new round.
    let refused: any = null
    for (let round = 0; round < 5 && !refused; round++) {
      let settled = false
      const running = detect({ taskId, algorithmCode: 'face-detection', imageBase64: await slowImage() }).finally(() => { settled = true })
      await sleep(20)
      while (!settled && !refused) {
        const attempt = await create({ taskId, algorithmCode: 'face-presence' })
        if (attempt.body.resMsg[0]?.messageKey === 'api.error.TaskBusy') refused = attempt.body.resMsg[0]
        else {
          expect((await create({ taskId, algorithmCode: 'face-detection' })).body.resCode).toBe(1)
          await sleep(50)
        }
      }
      const outcome = await running
      if (refused) expect(outcome.body.resCode).toBe(1)
    }
    expect(refused).toMatchObject({ messageKey: 'api.error.TaskBusy', retryable: true })
    // Still the face-detection task.
    expect((await detect({ taskId, algorithmCode: 'face-detection', imageBase64: b64(sample1) })).body.resCode).toBe(1)
    expect((await cancel({ taskId, algorithmCode: 'face-detection' })).body.resCode).toBe(1)
  })

  test('an upload whose detection failed retryably (sidecar killed) is detected on a retry with the same uploadId', async () => {
    const taskId = randomUUID()
    await create({ taskId, algorithmCode: 'face-detection' })
    const uploadId = await upload(sample1)
    const { failed } = await detectThroughKilledSidecar({ taskId, algorithmCode: 'face-detection', uploadId })
    expect(failed.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.SidecarUnavailable', retryable: true })
    const retried = await detect({ taskId, algorithmCode: 'face-detection', uploadId })
    expect(retried.body.resCode).toBe(1)
    expect(retried.body.resData.algorithmCode).toBe('face-detection')
    expect((await detect({ taskId, algorithmCode: 'face-detection', uploadId })).body.resMsg[0].messageKey).toBe('api.error.uploadConsumed')
    expect((await cancel({ taskId, algorithmCode: 'face-detection' })).body.resCode).toBe(1)
  })

  test('sidecar killed during a detection: fails fast and retryably, the same taskId works after the restart', async () => {
    const taskId = randomUUID()
    await create({ taskId, algorithmCode: 'face-detection' })
    const { failed, pid } = await detectThroughKilledSidecar({ taskId, algorithmCode: 'face-detection', imageBase64: b64(sample1) })
    expect(failed.status).toBe(503)
    expect(failed.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.SidecarUnavailable', retryable: true, recommendedAction: 'RETRY' })
    const again = await detect({ taskId, algorithmCode: 'face-detection', imageBase64: b64(sample1) })
    expect(again.body.resCode).toBe(1)
    expect(targets(again.body.resData)).toHaveLength(3)
    expect(sidecarPid()).not.toBe(pid)
  })
})

describe('device restart, fullPicture URL mode and a model that fails to initialize', () => {
  it('tasks persist across a runtime restart; fullPicture is a URL the device serves', async () => {
    const env = { FILE_SERVICE_BASE_URL: 'http://device.example:8080/' }
    let device = await startDevice({ env })
    try {
      const mtk = await device.adminToken()
      const taskId = randomUUID()
      expect((await device.post('/v1/cwai/aihost/PTaskCreate', { taskId, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }, mtk)).body.resCode).toBe(1)
      await device.stop()
      device = await startDevice({ dataDir: device.dataDir, env })
      const mtk2 = await device.adminToken()
      // No PTaskCreate after the restart: the task was restored from the database.
      const result = await device.post('/v1/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode: 'face-detection', imageBase64: b64(sample1) }, mtk2)
      expect(result.body.resCode).toBe(1)
      expect(targets(result.body.resData)).toHaveLength(3)
      const url = new URL(result.body.resData.fullPicture)
      expect(`${url.protocol}//${url.host}`).toBe('http://device.example:8080')
      const picture = await fetch(device.url + url.pathname + url.search, { headers: { mtk: mtk2 } })
      expect(picture.status).toBe(200)
      expect(picture.headers.get('content-type')).toBe('image/jpeg')
      const jpeg = Buffer.from(await picture.arrayBuffer())
      expect(await sharp(jpeg).metadata()).toMatchObject({ format: 'jpeg', width: 1920, height: 1280 })
      expect((await fetch(device.url + url.pathname + url.search)).status).toBe(401)
      const missing = await fetch(`${device.url}${url.pathname}?id=${randomUUID()}`, { headers: { mtk: mtk2 } })
      expect(missing.status).toBe(404)
      const escape = await fetch(`${device.url}${url.pathname}?id=../../device.db`, { headers: { mtk: mtk2 } })
      expect((await escape.json()).resMsg[0].messageKey).toBe('api.error.InvalidParam')
    } finally {
      await device.stop()
      device.cleanup()
    }
  }, 180_000)

  it('a model that fails to initialize → TaskCreateFailed, and the task is not created', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'manifests-'))
    const manifest = JSON.parse(readFileSync(path.resolve('models/manifests/face-detection.json'), 'utf8'))
    manifest.algorithmId = 'broken-face'
    manifest.models['blazeface-back'].source.file = 'README.md' // exists, but is no ONNX model
    writeFileSync(path.join(dir, 'broken.json'), JSON.stringify(manifest))
    const device = await startDevice({ env: { MODELS_MANIFEST_DIR: dir } })
    try {
      const mtk = await device.adminToken()
      const created = await device.post('/gtw/cwai/aihost/PTaskCreate', { taskId: 't1', algorithmCode: 'broken-face', algorithmUpdateTime: String(Date.now()) }, mtk)
      expect(created.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.TaskCreateFailed', recommendedAction: 'CHECK_MODEL_STATUS', retryable: false })
      const detect = await device.post('/gtw/cwai/aihost/PTaskDetectPic', { taskId: 't1', algorithmCode: 'broken-face', imageBase64: b64(sample1) }, mtk)
      expect(detect.body.resMsg[0].messageKey).toBe('api.error.NotCreated')
    } finally {
      await device.stop()
      device.cleanup()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
