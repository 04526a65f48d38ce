import { describe, expect, test } from 'vitest'
import { SOURCE_TYPES } from '../../shared/cameras/types.ts'
import { inputArgs } from '../../runtime/cameras/ffmpeg.ts'
import { cameraSources, ffmpegInput } from '../../runtime/cameras/sources/index.ts'
import { httpKinds } from '../../runtime/cameras/sources/http.ts'

describe('camera source plugins (runtime/cameras/sources/)', () => {
  test('one plugin per source type of the contract, and nothing else', () => {
    expect(Object.keys(cameraSources).sort()).toEqual([...SOURCE_TYPES].sort())
  })

  test('an HTTP URL is read as MJPEG for multipart/x-mixed-replace, as snapshots for a picture, refused for text', () => {
    const kindOf = (type: string) => Object.entries(httpKinds).find(([, kind]) => kind.answers(type))?.[0]
    expect(kindOf('multipart/x-mixed-replace;boundary=ffmpeg')).toBe('mjpeg')
    expect(kindOf('image/jpeg')).toBe('snapshot')
    expect(kindOf('application/octet-stream')).toBe('snapshot')
    expect(kindOf('text/plain')).toBeUndefined()
  })

  test('each ffmpeg input uses its own options before -i; an unknown input name is refused', () => {
    const options = { timeoutMs: 5000, rtspTimeoutOption: '-timeout' }
    const before = (name: string) => { const args = inputArgs({ sourceType: name, input: 'x' }, options); return args.slice(args.indexOf('-analyzeduration') + 2, args.indexOf('-i')) }
    expect(before('mjpeg')).toEqual(['-protocol_whitelist', 'http,https,tcp,tls', '-rw_timeout', '5000000', '-f', 'mpjpeg'])
    expect(before('usb')).toEqual(['-f', 'v4l2'])
    expect(before('file')).toEqual(['-protocol_whitelist', 'file', '-re', '-stream_loop', '-1'])
    expect(ffmpegInput('rtsp').timed).toBe(true)
    expect(() => ffmpegInput('http')).toThrow(/no ffmpeg input named http/)
  })
})
