import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import path from 'node:path'
import { eq } from 'drizzle-orm'
import sharp from 'sharp'
import * as tus from 'tus-js-client'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../shared/config.ts'
import { openDb } from '../../runtime/db/client.ts'
import { users } from '../../shared/db/schema/index.ts'
import type { Logger } from '../../shared/handler.ts'
import { UploadManager } from '../../runtime/uploads/service.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { startDevice, type DeviceProcess } from '../helpers/device.ts'

const MB = 1024 * 1024
const BASE = '/gtw/cwai/atomic/model'
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')
const silent: Logger = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, child: () => silent }

/** One uploadTemp request the way a browser sends it: FormData, fields first, the file last. */
async function sendChunk(device: DeviceProcess, mtk: string, fields: Record<string, string | number | undefined>, data: Buffer, filename = 'file.bin') {
  const form = new FormData()
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, String(value))
  form.append('file', new Blob([new Uint8Array(data)]), filename)
  const response = await fetch(`${device.url}${BASE}/uploadTemp`, { method: 'POST', headers: { mtk }, body: form })
  return { status: response.status, body: await response.json() as any }
}

type Part = { name: string; value: string } | { name: string; filename: string; data: Buffer }

/** A hand-built multipart body, so that part order and a hostile filename go out byte for byte. */
function multipartBody(parts: Part[]) {
  const boundary = `----device-test-${randomBytes(8).toString('hex')}`
  const pieces = parts.flatMap((part) => 'value' in part
    ? [Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`)]
    : [Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`), part.data, Buffer.from('\r\n')])
  return { body: Buffer.concat([...pieces, Buffer.from(`--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` }
}

/** The real service on a device's database file and staging folder, as a handler would claim with it. */
async function claimOnDevice(device: DeviceProcess, uploadId: string, purpose: string) {
  const config = loadConfig({}, { dataDir: device.dataDir })
  const db = openDb(config.databaseUrl)
  try {
    const [admin] = await db.db.select().from(users).where(eq(users.accountName, 'admin'))
    const uploads = new UploadManager({ db: db.db, config, clock: { now: () => Date.now() }, log: silent, sweepTimer: false })
    const who = { userId: admin!.id, accountName: 'admin', sessionId: null, transport: 'internal' as const, passwordChangeRequired: false }
    const claimed = await uploads.claim(uploadId, who, purpose)
    const secondClaim = await uploads.claim(uploadId, who, purpose).then(() => null, (error: unknown) => error)
    return { claimed, secondClaim }
  } finally {
    db.close()
  }
}

function chunkFields(file: Buffer, chunkBytes: number, index: number, extra: Record<string, string | number | undefined> = {}) {
  const totalChunks = Math.ceil(file.length / chunkBytes)
  const data = file.subarray(index * chunkBytes, (index + 1) * chunkBytes)
  return {
    fields: { purpose: 'model', chunkIndex: index, totalChunks, totalSize: file.length, chunkSize: data.length, sha256: sha256(file), ...extra },
    data,
  }
}

/** The file's device (shared by the HTTP uploads and the tus endpoint); the resume test runs its own. */
test.override('deviceOptions', { env: { UPLOAD_RESERVE_BYTES: String(64 * MB) } })

test.describe('uploads over HTTP (spec 4.4-4.6, 4.12) on the real runtime', () => {
  let device: DeviceProcess
  let mtk: string
  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
  })

  test('uploadCapabilities answers every field of spec 2.5 and needs an mtk', async () => {
    const anonymous = await device.post(`${BASE}/uploadCapabilities`, {})
    expect(anonymous.status).toBe(401)
    const { status, body } = await device.post(`${BASE}/uploadCapabilities`, {}, mtk)
    expect(status).toBe(200)
    expect(body).toMatchObject({ resCode: 1, resMsg: [] })
    expect(body.resData).toMatchObject({
      maxTotalSize: '0', maxChunkSize: String(8 * MB), maxChunks: 0, reserveBytes: String(64 * MB), idleTimeoutMs: 1_800_000,
      absoluteTimeoutMs: 0, resumable: true, persistentAcrossRestart: true, maxImagePixels: expect.any(Number),
      availableBytes: expect.stringMatching(/^\d+$/), availableForNewUploadsBytes: expect.stringMatching(/^\d+$/),
      reservedBySessionsBytes: expect.stringMatching(/^\d+$/), maxEncodedImageBytes: expect.stringMatching(/^\d+$/),
    })
  })

  test('a 3-chunk upload end to end: open, advance, complete (sha256 verified), then cancelled', async () => {
    const file = randomBytes(2 * MB + 4321)
    const clientRequestId = randomUUID()
    const first = chunkFields(file, MB, 0, { clientRequestId })
    const r0 = await sendChunk(device, mtk, first.fields, first.data, 'weights.onnx')
    expect(r0.body).toMatchObject({ resCode: 1, resData: { nextChunkIndex: '1', complete: false } })
    const uploadId = r0.body.resData.uploadId as string
    expect(r0.body.resData.filePath).toBe(`upload://${uploadId}`)
    const r1 = await sendChunk(device, mtk, chunkFields(file, MB, 1, { clientRequestId, uploadId }).fields, chunkFields(file, MB, 1).data, 'weights.onnx')
    expect(r1.body.resData).toEqual({ uploadId, nextChunkIndex: '2', complete: false, filePath: `upload://${uploadId}` })
    const r2 = await sendChunk(device, mtk, chunkFields(file, MB, 2, { clientRequestId, uploadId }).fields, chunkFields(file, MB, 2).data, 'weights.onnx')
    expect(r2.body.resData).toEqual({ uploadId, nextChunkIndex: '3', complete: true, filePath: `upload://${uploadId}` })
    expect(sha256(readFileSync(path.join(device.dataDir, 'uploads', uploadId)))).toBe(sha256(file))

    const caps = (await device.post(`${BASE}/uploadCapabilities`, {}, mtk)).body.resData
    expect(caps.activeSessions).toBeGreaterThanOrEqual(1)
    expect((await device.post(`${BASE}/cancelUpload`, { uploadId }, mtk)).body).toMatchObject({ resCode: 1, resMsg: [] })
    const again = await device.post(`${BASE}/cancelUpload`, { uploadId }, mtk)
    expect(again.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.uploadCancelled', recommendedAction: 'START_NEW_UPLOAD' })
  })

  test('a single-chunk image upload completes in one request', async () => {
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 30, b: 30 } } }).png().toBuffer()
    const { body } = await sendChunk(device, mtk, {
      purpose: 'image', chunkIndex: 0, totalChunks: 1, totalSize: png.length, chunkSize: png.length, clientRequestId: randomUUID(),
    }, png, 'red.png')
    expect(body).toMatchObject({ resCode: 1, resData: { nextChunkIndex: '1', complete: true } })
    expect(readFileSync(path.join(device.dataDir, 'uploads', body.resData.uploadId)).equals(png)).toBe(true)
  })

  test('a client that goes away in the middle of a chunk leaves the session as it was; the chunk is then accepted', async () => {
    const file = randomBytes(2 * MB + 999)
    const clientRequestId = randomUUID()
    const first = chunkFields(file, MB, 0, { clientRequestId })
    const uploadId = (await sendChunk(device, mtk, first.fields, first.data)).body.resData.uploadId as string
    const second = chunkFields(file, MB, 1, { clientRequestId, uploadId })
    // The whole multipart request, of which only the first half is sent before the socket closes.
    const form = new FormData()
    for (const [name, value] of Object.entries(second.fields)) form.append(name, String(value))
    form.append('file', new Blob([new Uint8Array(second.data)]), 'file.bin')
    const request = new Request('http://device/', { method: 'POST', body: form })
    const whole = Buffer.from(await request.arrayBuffer())
    const { port } = new URL(device.url)
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(`POST ${BASE}/uploadTemp HTTP/1.1\r\nHost: 127.0.0.1\r\nmtk: ${mtk}\r\n` +
          `Content-Type: ${request.headers.get('content-type')}\r\nContent-Length: ${whole.length}\r\n\r\n`)
        socket.write(whole.subarray(0, whole.length >> 1), () => setTimeout(() => { socket.destroy(); resolve() }, 100))
      })
      socket.on('error', reject)
    })
    // The device notices the disconnect; until it has rolled the chunk back, the session is busy.
    let retried = await sendChunk(device, mtk, second.fields, second.data)
    for (let attempt = 0; attempt < 100 && retried.body.resMsg[0]?.msgCode === 'TRANSFER_BUSY'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      retried = await sendChunk(device, mtk, second.fields, second.data)
    }
    expect(retried.body).toMatchObject({ resCode: 1, resData: { uploadId, nextChunkIndex: '2', complete: false } })
    const last = chunkFields(file, MB, 2, { clientRequestId, uploadId })
    expect((await sendChunk(device, mtk, last.fields, last.data)).body.resData).toMatchObject({ nextChunkIndex: '3', complete: true })
    expect(sha256(readFileSync(path.join(device.dataDir, 'uploads', uploadId)))).toBe(sha256(file))
    expect((await device.post(`${BASE}/cancelUpload`, { uploadId }, mtk)).body).toMatchObject({ resCode: 1 })
  })

  test('a filename with ../ and NUL through the real multipart parser is metadata only: bytes stored under the uploadId', async () => {
    const hostile = '../../etc/passwd\u0000.jpg'
    const file = randomBytes(2 * MB + 55)
    const clientRequestId = randomUUID()
    const post = async (parts: Part[]) => {
      const { body, contentType } = multipartBody(parts)
      const response = await fetch(`${device.url}${BASE}/uploadTemp`, { method: 'POST', headers: { mtk, 'Content-Type': contentType }, body: new Uint8Array(body) })
      return await response.json() as any
    }
    const textParts = (fields: Record<string, string | number | undefined>) =>
      Object.entries(fields).flatMap(([name, value]) => (value === undefined ? [] : [{ name, value: String(value) }]))
    // Chunk 0 with the fields first (streamed straight to the store), chunk 1 with the file part
    // first (spooled until its fields arrive): both paths see the same hostile filename.
    const c0 = chunkFields(file, 2 * MB, 0, { clientRequestId })
    const r0 = await post([...textParts(c0.fields), { name: 'file', filename: hostile, data: c0.data }])
    expect(r0).toMatchObject({ resCode: 1, resData: { nextChunkIndex: '1', complete: false } })
    const uploadId = r0.resData.uploadId as string
    const c1 = chunkFields(file, 2 * MB, 1, { clientRequestId, uploadId })
    const r1 = await post([{ name: 'file', filename: hostile, data: c1.data }, ...textParts(c1.fields)])
    expect(r1).toMatchObject({ resCode: 1, resData: { uploadId, nextChunkIndex: '2', complete: true } })

    const { claimed, secondClaim } = await claimOnDevice(device, uploadId, 'model')
    expect(claimed).toMatchObject({ uploadId, originalFilename: hostile, size: file.length, path: path.join(device.dataDir, 'uploads', uploadId) })
    expect(sha256(readFileSync(claimed.path))).toBe(sha256(file))
    expect(secondClaim).toMatchObject({ item: { messageKey: 'api.error.uploadConsumed' } })
    expect(existsSync(path.resolve(device.dataDir, 'uploads', '../../etc/passwd'))).toBe(false)
    expect(readdirSync(device.dataDir, { recursive: true }).map(String).filter((entry) => entry.includes('passwd'))).toEqual([])
    expect(readdirSync(path.join(device.dataDir, 'upload-spool'))).toEqual([])
  })

  test('bad input over HTTP: chunk over maxChunkSize → 413 uploadChunkTooLarge; unknown uploadId; no mtk → 401', async () => {
    const big = randomBytes(8 * MB + 1000)
    const tooLarge = await sendChunk(device, mtk, { purpose: 'model', chunkIndex: 0, totalChunks: 2, totalSize: 16 * MB, chunkSize: 8 * MB }, big)
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.uploadChunkTooLarge', details: { limitBytes: 8 * MB } })
    const unknown = await device.post(`${BASE}/cancelUpload`, { uploadId: 'nope' }, mtk)
    expect(unknown.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.uploadNotFound', details: { uploadId: 'nope' } })
    const missing = await device.post(`${BASE}/cancelUpload`, {}, mtk)
    expect(missing.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam' })
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(1)]), 'x')
    expect((await fetch(`${device.url}${BASE}/uploadTemp`, { method: 'POST', body: form })).status).toBe(401)
  })
})

describe('resume after SIGKILL (spec 4.12.2)', () => {
  it('kill after chunk 1 of 3, restart, resend chunk 0 → nextChunkIndex 1, finish, bytes verified by sha256; orphaned spool files removed', async () => {
    const first = await startDevice()
    const dataDir = first.dataDir
    let second: DeviceProcess | null = null
    try {
      const mtk = await first.adminToken()
      const file = randomBytes(2 * MB + 999)
      const clientRequestId = randomUUID()
      const c0 = chunkFields(file, MB, 0, { clientRequestId })
      const r0 = await sendChunk(first, mtk, c0.fields, c0.data)
      expect(r0.body.resData).toMatchObject({ nextChunkIndex: '1', complete: false })
      const uploadId = r0.body.resData.uploadId
      await first.kill()
      // A request whose file part was being spooled when the process died leaves its spool file.
      const orphanSpool = path.join(dataDir, 'upload-spool', 'spool-0123456789abcdef01234567')
      mkdirSync(path.dirname(orphanSpool), { recursive: true })
      writeFileSync(orphanSpool, randomBytes(4096))

      second = await startDevice({ dataDir })
      expect(existsSync(orphanSpool)).toBe(false) // removed at start-up, before requests are served
      const mtk2 = await second.adminToken() // a new sign-in: the same user
      const resumed = await sendChunk(second, mtk2, c0.fields, c0.data)
      expect(resumed.body.resData).toEqual({ uploadId, nextChunkIndex: '1', complete: false, filePath: `upload://${uploadId}` })
      for (const index of [1, 2]) {
        const next = chunkFields(file, MB, index, { clientRequestId, uploadId })
        expect((await sendChunk(second, mtk2, next.fields, next.data)).body.resCode).toBe(1)
      }
      expect(sha256(readFileSync(path.join(dataDir, 'uploads', uploadId)))).toBe(sha256(file))
    } finally {
      await first.kill()
      await second?.stop()
      first.cleanup()
    }
  })
})

test.describe('native tus endpoint', () => {
  let device: DeviceProcess
  let mtk: string
  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
  })

  test('tus-js-client uploads a file that claim then consumes once', async () => {
    const file = randomBytes(3 * MB + 17)
    const location = await new Promise<string>((resolve, reject) => {
      const upload = new tus.Upload(file, {
        endpoint: `${device.url}${BASE}/tus`,
        headers: { mtk },
        chunkSize: MB,
        metadata: { filename: 'clip.mp4', purpose: 'video', sha256: sha256(file) },
        onError: reject,
        onSuccess: () => resolve(upload.url!),
      })
      upload.start()
    })
    const uploadId = location.split('/').pop()!

    const { claimed, secondClaim } = await claimOnDevice(device, uploadId, 'video')
    expect(claimed).toMatchObject({ uploadId, originalFilename: 'clip.mp4', size: file.length, purpose: 'video' })
    expect(sha256(readFileSync(claimed.path))).toBe(sha256(file))
    expect(secondClaim).toMatchObject({ item: { messageKey: 'api.error.uploadConsumed' } })
  })

  const tusRequest = (method: string, url: string, headers: Record<string, string> = {}, body?: Buffer) =>
    fetch(url.startsWith('http') ? url : `${device.url}${url}`, {
      method, headers: { 'Tus-Resumable': '1.0.0', mtk, ...headers }, ...(body ? { body: new Uint8Array(body) } : {}),
    })
  const create = async (length: number, metadata = 'purpose aW1hZ2U=') => {
    const response = await tusRequest('POST', `${BASE}/tus`, { 'Upload-Length': String(length), 'Upload-Metadata': metadata })
    return { response, url: response.headers.get('location') ?? '' }
  }

  test('OPTIONS advertises creation, termination, expiration and checksum', async () => {
    const response = await fetch(`${device.url}${BASE}/tus`, { method: 'OPTIONS' })
    expect(response.status).toBe(204)
    expect(response.headers.get('tus-version')).toBe('1.0.0')
    expect(response.headers.get('tus-extension')?.split(',')).toEqual(expect.arrayContaining(['creation', 'termination', 'expiration', 'checksum']))
    expect(response.headers.get('tus-checksum-algorithm')?.split(',')).toContain('sha256')
  })

  test('needs an mtk; an unknown upload is 404', async () => {
    const anonymous = await fetch(`${device.url}${BASE}/tus`, { method: 'POST', headers: { 'Tus-Resumable': '1.0.0', 'Upload-Length': '10' } })
    expect(anonymous.status).toBe(401)
    expect((await anonymous.json() as any).resMsg[0].messageKey).toBe('api.error.Unauthorized')
    expect((await tusRequest('HEAD', `${BASE}/tus/${'0'.repeat(32)}`)).status).toBe(404)
  })

  test('checksum: a PATCH whose Upload-Checksum does not match is 460 and leaves the offset; a matching one is stored', async () => {
    const data = randomBytes(1000)
    const { response, url } = await create(data.length)
    expect(response.status).toBe(201)
    expect(response.headers.get('upload-expires')).toBeTruthy()
    const patch = (digest: string) => tusRequest('PATCH', url, {
      'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': '0', 'Upload-Checksum': `sha256 ${digest}`,
    }, data)
    const wrong = await patch(createHash('sha256').update('other').digest('base64'))
    expect(wrong.status).toBe(460)
    expect((await tusRequest('HEAD', url)).headers.get('upload-offset')).toBe('0')
    const right = await patch(createHash('sha256').update(data).digest('base64'))
    expect(right.status).toBe(204)
    expect(right.headers.get('upload-offset')).toBe('1000')
    const unsupported = await tusRequest('PATCH', url, { 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': '1000', 'Upload-Checksum': 'crc32 AAAA' }, Buffer.alloc(0))
    expect(unsupported.status).toBe(400)
  })

  test('termination releases the reservation; the upload is then gone (410) and cancelUpload says cancelled', async () => {
    const before = (await device.post(`${BASE}/uploadCapabilities`, {}, mtk)).body.resData
    const { url } = await create(5 * MB)
    const during = (await device.post(`${BASE}/uploadCapabilities`, {}, mtk)).body.resData
    expect(Number(during.reservedBySessionsBytes) - Number(before.reservedBySessionsBytes)).toBe(5 * MB)
    expect((await tusRequest('DELETE', url)).status).toBe(204)
    const after = (await device.post(`${BASE}/uploadCapabilities`, {}, mtk)).body.resData
    expect(after.reservedBySessionsBytes).toBe(before.reservedBySessionsBytes)
    expect(after.activeSessions).toBe(before.activeSessions)
    expect((await tusRequest('HEAD', url)).status).toBe(410)
    const cancel = await device.post(`${BASE}/cancelUpload`, { uploadId: url.split('/').pop() }, mtk)
    expect(cancel.body.resMsg[0].messageKey).toBe('api.error.uploadCancelled')
  })

  test('creation goes through the same admission: too large → 507 with STORAGE_RESERVE_REACHED', async () => {
    const caps = (await device.post(`${BASE}/uploadCapabilities`, {}, mtk)).body.resData
    const { response } = await create(Number(caps.availableBytes) + 1024 * MB)
    expect(response.status).toBe(507)
    expect((await response.json() as any).resMsg[0]).toMatchObject({ messageKey: 'api.error.storageReserveReached', recommendedAction: 'FREE_DISK_SPACE' })
  })
})
