import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { receiveChunk } from '../../runtime/uploads/multipart.ts'
import { alice, apiError, bytes, harness, MB, sha256, type Harness } from './harness.ts'

type Part = { name: string; value: string } | { name: string; filename?: string; data: Buffer }

/** A hand-built multipart body, so that part order, names and hostile values are exact. */
function multipart(parts: Part[]): Request {
  const boundary = `----test${Math.random().toString(16).slice(2)}`
  const pieces: Buffer[] = []
  for (const part of parts) {
    if ('value' in part) {
      pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`))
    } else {
      const filename = part.filename === undefined ? '' : `; filename="${part.filename}"`
      pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${filename}\r\nContent-Type: application/octet-stream\r\n\r\n`), part.data, Buffer.from('\r\n'))
    }
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`))
  return new Request('http://device/gtw/cwai/atomic/model/uploadTemp', {
    method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: Buffer.concat(pieces),
  })
}

const fieldParts = (fields: Record<string, string | number>): Part[] =>
  Object.entries(fields).map(([name, value]) => ({ name, value: String(value) }))

describe('uploadTemp multipart streaming (spec 4.5)', () => {
  let h: Harness
  beforeEach(async () => { h = await harness({ uploadMaxChunkBytes: 1 * MB }) })
  afterEach(async () => { await h.close() })

  const send = (request: Request) => receiveChunk(request, { maxChunkBytes: MB, spoolDir: path.join(h.uploads.stagingDir, 'spool') },
    (fields, body) => h.uploads.putChunk(alice, fields, body))
  const file = bytes(MB + 500)
  const base = (index: number) => ({
    purpose: 'image', chunkIndex: index, totalChunks: 2, totalSize: file.length,
    chunkSize: index === 0 ? MB : 500, clientRequestId: 'c-1',
  })
  const data = (index: number) => (index === 0 ? file.subarray(0, MB) : file.subarray(MB))

  it('fields before the file: streamed; file before the fields: spooled; both give the same bytes', async () => {
    const first = await send(multipart([...fieldParts(base(0)), { name: 'file', filename: 'a.png', data: data(0) }]))
    expect(first).toMatchObject({ nextChunkIndex: '1', complete: false })
    const second = await send(multipart([
      { name: 'file', filename: 'a.png', data: data(1) }, ...fieldParts({ ...base(1), uploadId: first.uploadId }),
    ]))
    expect(second).toMatchObject({ uploadId: first.uploadId, nextChunkIndex: '2', complete: true })
    const claimed = await h.uploads.claim(first.uploadId, alice, 'image')
    expect(claimed.originalFilename).toBe('a.png')
    expect(sha256(readFileSync(claimed.path))).toBe(sha256(file))
    expect(readdirSync(path.join(h.uploads.stagingDir, 'spool'))).toEqual([]) // spool file removed
  })

  it('a field after a streamed file part is rejected and the chunk rolled back', async () => {
    const first = await send(multipart([...fieldParts(base(0)), { name: 'file', filename: 'a.png', data: data(0) }]))
    const error = await apiError(send(multipart([
      ...fieldParts({ ...base(1), uploadId: first.uploadId }), { name: 'file', filename: 'a.png', data: data(1) }, { name: 'sha256', value: 'a'.repeat(64) },
    ])))
    expect(error).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: 'sha256' } })
    expect(await h.uploads.capabilities()).toMatchObject({ reservedBySessionsBytes: '500', activeSessions: 1 })
    expect((await h.uploads.repo.find(first.uploadId))?.nextChunkIndex).toBe(1)
  })

  it.each([
    ['missing file part', [...fieldParts(base(0))], 'file', 'missing'],
    ['file under another name', [...fieldParts(base(0)), { name: 'upload', filename: 'a.png', data: Buffer.alloc(10) }], 'upload', null],
    ['file part without filename (a text field)', [...fieldParts(base(0)), { name: 'file', value: 'abc' }], 'file', null],
    ['missing purpose', [...fieldParts({ ...base(0), purpose: '' }), { name: 'file', filename: 'a', data: data(0) }], 'purpose', 'missing'],
    ['non-numeric chunkIndex', [...fieldParts({ ...base(0), chunkIndex: 'one' }), { name: 'file', filename: 'a', data: data(0) }], 'chunkIndex', null],
    ['negative totalSize', [...fieldParts({ ...base(0), totalSize: -5 }), { name: 'file', filename: 'a', data: data(0) }], 'totalSize', null],
    ['totalChunks 0', [...fieldParts({ ...base(0), totalChunks: 0 }), { name: 'file', filename: 'a', data: data(0) }], 'totalChunks', null],
    ['two file parts', [...fieldParts(base(0)), { name: 'file', filename: 'a', data: data(0) }, { name: 'file', filename: 'b', data: Buffer.alloc(3) }], 'file', null],
    ['a field sent twice', [...fieldParts(base(0)), { name: 'purpose', value: 'model' }, { name: 'file', filename: 'a', data: data(0) }], 'purpose', 'sent more than once'],
  ] as [string, Part[], string, string | null][])('%s → api.error.InvalidParam naming the part, no session', async (_name, parts, field, reason) => {
    const error = await apiError(send(multipart(parts)))
    expect(error).toMatchObject({ messageKey: 'api.error.InvalidParam', recommendedAction: 'CHECK_UPLOAD_PARAMETERS', details: { field } })
    if (reason) expect((error.details as { reason: string }).reason).toBe(reason)
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
  })

  it('a file part larger than maxChunkSize is rejected while spooling (file first)', async () => {
    const error = await apiError(send(multipart([
      { name: 'file', filename: 'a', data: bytes(MB + 100) }, ...fieldParts({ ...base(0), chunkSize: MB }),
    ])))
    expect(error).toMatchObject({ messageKey: 'api.error.uploadChunkTooLarge', httpStatus: 413, details: { limitBytes: MB } })
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0 })
    expect(readdirSync(path.join(h.uploads.stagingDir, 'spool'))).toEqual([])
  })

  it('a slow reader still gets every byte of the file part (the body ends only after the part drained)', async () => {
    const data = bytes(800 * 1024)
    const whole = Buffer.from(await multipart([...fieldParts({ purpose: 'image', chunkIndex: 0, totalChunks: 1, totalSize: data.length, chunkSize: data.length }),
      { name: 'file', filename: 'slow.bin', data }]).arrayBuffer())
    const pieces = Array.from({ length: Math.ceil(whole.length / 65536) }, (_, i) => whole.subarray(i * 65536, (i + 1) * 65536))
    const boundary = whole.subarray(2, whole.indexOf('\r\n')).toString()
    const request = new Request('http://device/x', {
      method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: Readable.toWeb(Readable.from(pieces)) as ReadableStream, duplex: 'half',
    } as RequestInit)
    const received = await receiveChunk(request, { maxChunkBytes: MB, spoolDir: path.join(h.uploads.stagingDir, 'spool') }, async (_fields, body) => {
      const hash = createHash('sha256')
      for await (const piece of body) {
        hash.update(piece as Buffer)
        await new Promise((resolve) => setTimeout(resolve, 2))
      }
      return hash.digest('hex')
    })
    expect(received).toBe(sha256(data))
  })

  it('a non-multipart body → UnsupportedMediaType', async () => {
    const request = new Request('http://device/x', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(await apiError(send(request))).toMatchObject({ messageKey: 'api.error.UnsupportedMediaType', httpStatus: 415 })
  })

  it('a multipart body cut short inside the file part → InvalidParam, no session', async () => {
    const whole = multipart([...fieldParts(base(0)), { name: 'file', filename: 'a', data: data(0) }])
    const body = Buffer.from(await whole.arrayBuffer())
    const cut = new Request(whole.url, { method: 'POST', headers: whole.headers, body: body.subarray(0, body.length - 2000) })
    expect(await apiError(send(cut))).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: 'file' } })
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
  })
})
