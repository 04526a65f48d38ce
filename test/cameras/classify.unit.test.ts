import { describe, expect, it } from 'vitest'
import { classifyExit } from '../../runtime/cameras/ffmpeg.ts'

// ffmpeg 4.1's own last lines for these runs.
const INVALID = 'rtsp://127.0.0.1:42571/cam: Invalid data found when processing input'
const REFUSED = 'rtsp://127.0.0.1:9/cam: Connection refused'
const STREAM = '    Stream #0:0: Video: h264 (High), yuv420p(progressive), 768x432, 25 fps, 25 tbr, 90k tbn, 50 tbc'

describe('the error of an ended ffmpeg run', () => {
  it('a source that stayed silent for the whole connect timeout is unreachable, whatever ffmpeg called it', () => {
    expect(classifyExit(INVALID, { describedInput: false, elapsedMs: 6200, connectTimeoutMs: 6000 })).toBe('CameraUnreachable')
  })

  it('data that is no video, read before the timeout or after the source described itself, is a codec problem', () => {
    expect(classifyExit(INVALID, { describedInput: false, elapsedMs: 300, connectTimeoutMs: 6000 })).toBe('CameraUnsupportedCodec')
    expect(classifyExit(`${STREAM}\n${INVALID}`, { describedInput: true, elapsedMs: 9000, connectTimeoutMs: 6000 })).toBe('CameraUnsupportedCodec')
  })

  it('a cause ffmpeg names keeps its key', () => {
    expect(classifyExit(REFUSED, { describedInput: false, elapsedMs: 10, connectTimeoutMs: 6000 })).toBe('CameraUnreachable')
    expect(classifyExit('method DESCRIBE failed: 401 Unauthorized', { describedInput: false, elapsedMs: 7000, connectTimeoutMs: 6000 })).toBe('CameraAuthFailed')
  })
})
