/**
 * The reader's timed frames (runtime/cameras/ffmpeg.ts; docs/recording-and-live-view.md "Boxes
 * on the frame shown"): RTSP readers keep each frame's reception time and print it with showinfo.
 */
import { describe, expect, it } from 'vitest'
import { isShowinfo, parseShowinfo, readerArgs, timedVideoFilter } from '../../runtime/cameras/ffmpeg.ts'

describe('timed reader', () => {
  it('an RTSP reader stamps packets with the wall clock, keeps the stamps, selects frames instead of re-timing them and prints them', () => {
    const args = readerArgs({ sourceType: 'rtsp', input: 'rtsp://127.0.0.1:8554/cam' }, { fps: 5, timeoutMs: 5000, rtspTimeoutOption: '-timeout', maxSide: 640 })
    expect(args.slice(args.indexOf('-use_wallclock_as_timestamps'), args.indexOf('-use_wallclock_as_timestamps') + 2)).toEqual(['-use_wallclock_as_timestamps', '1'])
    expect(args.indexOf('-use_wallclock_as_timestamps')).toBeLessThan(args.indexOf('-i'))
    expect(args).toContain('-copyts')
    expect(args.slice(args.indexOf('-vsync'), args.indexOf('-vsync') + 2)).toEqual(['-vsync', '0'])
    const filter = args[args.indexOf('-vf') + 1]!
    expect(filter).toBe(timedVideoFilter(5, 640))
    expect(filter).toMatch(/^select='.*',scale=.*,settb=AVTB,showinfo$/)
    expect(filter).not.toMatch(/fps=/)
  })

  it('a reader at the source\'s own rate keeps every frame', () => {
    const args = readerArgs({ sourceType: 'rtsp', input: 'rtsp://127.0.0.1:8554/cam' }, { fps: 10, sourceFps: 10, timeoutMs: 5000, rtspTimeoutOption: '-timeout', maxSide: null })
    expect(args[args.indexOf('-vf') + 1]).toBe('settb=AVTB,showinfo')
    const fewer = readerArgs({ sourceType: 'rtsp', input: 'rtsp://127.0.0.1:8554/cam' }, { fps: 5, sourceFps: 10, timeoutMs: 5000, rtspTimeoutOption: '-timeout', maxSide: null })
    expect(fewer[fewer.indexOf('-vf') + 1]).toMatch(/^select='.*',settb=AVTB,showinfo$/)
  })

  it('other sources keep the fps filter and no timestamps', () => {
    const args = readerArgs({ sourceType: 'file', input: '/data/v.mp4' }, { fps: 5, timeoutMs: 5000, rtspTimeoutOption: '-timeout' })
    expect(args).not.toContain('-use_wallclock_as_timestamps')
    expect(args).not.toContain('-copyts')
    expect(args[args.indexOf('-vf') + 1]).toBe('fps=5')
  })

  it('reads showinfo\'s frame number and timestamp, and knows its lines', () => {
    const line = '[Parsed_showinfo_3 @ 0x1932d700] n:  12 pts:1795864598635778 pts_time:1.79586e+09 pos:    -1 fmt:rgb24 sar:0/1 s:320x180 i:P iskey:1 type:I checksum:5335FC7A plane_checksum:[5335FC7A] mean:[139 ] stdev:[68.7 ]'
    expect(parseShowinfo(line)).toEqual({ n: 12, pts: 1795864598635778 })
    expect(isShowinfo(line)).toBe(true)
    expect(isShowinfo('[Parsed_showinfo_3 @ 0x1932d700] color_range:tv color_space:smpte170m')).toBe(true)
    expect(parseShowinfo('[Parsed_showinfo_3 @ 0x1932d700] color_range:tv')).toBeNull()
    expect(isShowinfo('Stream #0:0: Video: h264 (High), yuv420p, 768x432, 10 fps')).toBe(false)
  })
})
