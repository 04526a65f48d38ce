import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { contentDisposition, mimeTypeOf, rangedFileResponse, safeFileName } from '../../shared/http/ranged-file.ts'

const dir = mkdtempSync(path.join(tmpdir(), 'ranged-'))
const bytes = Buffer.from(Array.from({ length: 10_000 }, (_, i) => i % 251))
const file = path.join(dir, 'data.bin')
writeFileSync(file, bytes)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const get = (range?: string) => new Request('http://device/x', { method: 'POST', headers: range ? { range } : {} })
const body = async (response: Response) => Buffer.from(await response.arrayBuffer())

describe('ranged file responder (spec 4.11, 7.1)', () => {
  it('answers 200 with the whole file when no Range is sent', async () => {
    const response = await rangedFileResponse(get(), file, { downloadName: 'data.bin' })
    expect(response.status).toBe(200)
    expect(response.headers.get('accept-ranges')).toBe('bytes')
    expect(response.headers.get('content-length')).toBe('10000')
    expect(response.headers.get('content-range')).toBeNull()
    expect((await body(response)).equals(bytes)).toBe(true)
  })

  it('answers 206 with Content-Range for the first bytes, a middle range and a suffix range', async () => {
    const cases: [string, number, number][] = [['bytes=0-99', 0, 99], ['bytes=5000-5999', 5000, 5999], ['bytes=-300', 9700, 9999], ['bytes=9990-', 9990, 9999], ['bytes=9000-20000', 9000, 9999]]
    for (const [range, start, end] of cases) {
      const response = await rangedFileResponse(get(range), file)
      expect(response.status, range).toBe(206)
      expect(response.headers.get('content-range'), range).toBe(`bytes ${start}-${end}/10000`)
      expect(response.headers.get('content-length'), range).toBe(String(end - start + 1))
      expect((await body(response)).equals(bytes.subarray(start, end + 1)), range).toBe(true)
    }
  })

  it('answers 416 with the current length for an unsatisfiable range', async () => {
    for (const range of ['bytes=10000-', 'bytes=20000-30000']) {
      const response = await rangedFileResponse(get(range), file)
      expect(response.status, range).toBe(416)
      expect(response.headers.get('content-range')).toBe('bytes */10000')
      const envelope = await response.json()
      expect(envelope.resCode).toBe(0)
      expect(envelope.resMsg[0]).toMatchObject({ messageKey: 'api.error.rangeNotSatisfiable', details: { sizeBytes: '10000' } })
    }
  })

  it('serves the whole file for a malformed or multi-part Range (RFC 9110 lets the server ignore it)', async () => {
    for (const range of ['bytes=abc', 'items=0-5', 'bytes=0-9,100-109']) {
      const response = await rangedFileResponse(get(range), file)
      expect(response.status, range).toBe(200)
      expect((await body(response)).length).toBe(10_000)
    }
  })

  it('derives the MIME type from the extension and offers a safe attachment name', async () => {
    expect(mimeTypeOf('photo.jpg')).toBe('image/jpeg')
    expect(mimeTypeOf('clip.MP4')).toBe('video/mp4')
    expect(mimeTypeOf('model.onnx')).toBe('application/octet-stream')
    expect(safeFileName('../../etc/passwd')).toBe('passwd')
    expect(safeFileName('..')).toBe('download')
    expect(safeFileName('a\\b\\c"d\n.onnx')).toBe('cd.onnx')
    expect(contentDisposition('attachment', 'modèle "v2".onnx')).toBe(`attachment; filename="mod_le v2.onnx"; filename*=UTF-8''mod%C3%A8le%20v2.onnx`)
    const response = await rangedFileResponse(get(), file, { downloadName: 'clip.mp4', disposition: 'inline' })
    expect(response.headers.get('content-type')).toBe('video/mp4')
    expect(response.headers.get('content-disposition')).toBe(`inline; filename="clip.mp4"; filename*=UTF-8''clip.mp4`)
    await response.body?.cancel()
  })
})
