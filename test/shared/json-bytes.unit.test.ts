import { randomBytes } from 'node:crypto'
import { describe, expect, it, vi } from 'vitest'
import { DataUrl } from '../../shared/http/data-url.ts'
import { jsonBytes } from '../../runtime/http/json-bytes.ts'

describe('jsonBytes: JSON with Base64 data: URLs spliced in as bytes', () => {
  const jpeg = randomBytes(300_001)
  const png = randomBytes(17)
  const envelope = {
    resCode: 1,
    resMsg: [],
    resData: {
      algorithmCode: 'face-detection',
      fullPicture: new DataUrl('image/jpeg', jpeg),
      // Strings that need escaping, non-ASCII text, and a client string shaped like a splice mark.
      areaList: [{ areaName: 'entrée "A"\n\u0000 😀', targetList: [{ label: 'splice-0-0', picture: new DataUrl('image/png', png) }] }],
      nothing: undefined,
    },
  }
  const expected = JSON.stringify(envelope) // DataUrl.toJSON gives the plain text

  it('gives exactly the UTF-8 bytes of JSON.stringify', () => {
    const bytes = jsonBytes(envelope)
    expect(bytes.equals(Buffer.from(expected))).toBe(true)
    const parsed = JSON.parse(bytes.toString('utf8'))
    expect(parsed.resData.fullPicture).toBe(`data:image/jpeg;base64,${jpeg.toString('base64')}`)
    expect(parsed.resData.areaList[0].targetList[0]).toEqual({ label: 'splice-0-0', picture: `data:image/png;base64,${png.toString('base64')}` })
    expect(parsed.resData.areaList[0].areaName).toBe('entrée "A"\n\u0000 😀')
  })

  it('serializes values without a DataUrl as JSON.stringify does, and a DataUrl elsewhere as its text', () => {
    const plain = { a: [1, 'två', null], b: { c: true } }
    expect(jsonBytes(plain).toString('utf8')).toBe(JSON.stringify(plain))
    expect(JSON.stringify({ p: new DataUrl('image/png', png) })).toBe(JSON.stringify({ p: `data:image/png;base64,${png.toString('base64')}` }))
    expect(String(new DataUrl('image/png', png))).toBe(`data:image/png;base64,${png.toString('base64')}`)
  })

  it('splices a DataUrl made by another copy of the module (every handler bundle has its own) without making its text', async () => {
    const specifier = '../../shared/http/data-url.ts?another-bundle'
    const copy = await import(specifier) as typeof import('../../shared/http/data-url.ts')
    expect(copy.DataUrl).not.toBe(DataUrl)
    const fromHandler = { fullPicture: new copy.DataUrl('image/jpeg', jpeg) }
    const asText = vi.spyOn(copy.DataUrl.prototype, 'toString')
    const bytes = jsonBytes(fromHandler)
    expect(asText).not.toHaveBeenCalled()
    expect(bytes.toString('utf8')).toBe(JSON.stringify({ fullPicture: `data:image/jpeg;base64,${jpeg.toString('base64')}` }))
  })

  it('refuses a media type that would need escaping', () => {
    expect(() => new DataUrl('image/jpeg"', jpeg)).toThrow(TypeError)
    expect(() => new DataUrl('image/jpeg;base64,', jpeg)).toThrow(TypeError)
  })
})
