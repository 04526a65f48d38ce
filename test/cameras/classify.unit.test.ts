import { describe, expect, it } from 'vitest'
import { classifyExit, errorLine } from '../../runtime/cameras/ffmpeg.ts'

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

describe('the line that says what went wrong', () => {
  // ffmpeg's messages (after -hide_banner) for one second of the footage read to the end, exit 0.
  const ENDED = [
    "Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'one-by-one-person-detection.mp4':",
    '  Duration: 00:02:19.40, start: 0.000000, bitrate: 1215 kb/s',
    STREAM,
    'Stream mapping:',
    '  Stream #0:0 -> #0:0 (h264 (native) -> rawvideo (native))',
    "Output #0, rawvideo, to 'pipe:1':",
    '    Stream #0:0: Video: rawvideo (RGB[24] / 0x18424752), rgb24, 768x432, q=2-31, 19906 kb/s, 5 fps, 5 tbn, 5 tbc',
    'frame=    5 fps=0.0 q=-0.0 Lsize=    4860kB time=00:00:01.00 bitrate=39813.1kbits/s speed=30.1x    ',
    'video:4860kB audio:0kB subtitle:0kB other streams:0kB global headers:0kB muxing overhead: 0.000000%',
  ]

  it('a run that went well to its end has none: its headers, mapping and statistics are no error', () => {
    expect(errorLine(ENDED)).toBeNull()
  })

  it('the error ffmpeg printed last, after its headers', () => {
    expect(errorLine([...ENDED.slice(0, 6), REFUSED, 'Conversion failed!'])).toBe(REFUSED)
  })
})
