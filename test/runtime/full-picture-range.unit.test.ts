import { randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import FullPicture from '../../functions/file/FullPicture.ts'
import { FULL_PICTURE_ROUTE, picturesDir } from '../../shared/tasks/full-picture.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'

describe('FullPicture serves a single Range (spec 4.11)', () => {
  let t: TestRuntime
  const id = randomUUID()
  const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8]), Buffer.alloc(1000, 7), Buffer.from([0xff, 0xd9])])
  beforeAll(async () => {
    t = await createTestRuntime()
    mkdirSync(picturesDir(t.config), { recursive: true })
    writeFileSync(path.join(picturesDir(t.config), `${id}.jpg`), jpeg)
  })
  afterAll(async () => t.close())

  const get = (headers: Record<string, string> = {}) => {
    const request = new Request(`http://device${FULL_PICTURE_ROUTE}?id=${id}`, { headers })
    return FullPicture.handle({ id }, t.ctx(null, request)) as Promise<Response>
  }

  it('whole picture without Range, as before: image/jpeg, private cache', async () => {
    const response = await get()
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('image/jpeg')
    expect(response.headers.get('cache-control')).toBe('private, max-age=3600')
    expect(response.headers.get('accept-ranges')).toBe('bytes')
    expect(Buffer.from(await response.arrayBuffer()).equals(jpeg)).toBe(true)
  })

  it('a middle range is 206 with Content-Range and exactly those bytes', async () => {
    const response = await get({ range: 'bytes=10-19' })
    expect(response.status).toBe(206)
    expect(response.headers.get('content-range')).toBe(`bytes 10-19/${jpeg.length}`)
    expect(response.headers.get('content-length')).toBe('10')
    expect(Buffer.from(await response.arrayBuffer()).equals(jpeg.subarray(10, 20))).toBe(true)
  })

  it('an unsatisfiable range is 416 naming the size', async () => {
    const response = await get({ range: `bytes=${jpeg.length}-` })
    expect(response.status).toBe(416)
    expect(response.headers.get('content-range')).toBe(`bytes */${jpeg.length}`)
    expect((await response.json()).resMsg[0]).toMatchObject({ messageKey: 'api.error.rangeNotSatisfiable', details: { sizeBytes: String(jpeg.length) } })
  })

  it('an unknown picture is still PictureNotFound', async () => {
    const other = randomUUID()
    await expect(FullPicture.handle({ id: other }, t.ctx())).rejects.toMatchObject({ item: { messageKey: 'api.error.PictureNotFound', details: { id: other } } })
  })
})
