/**
 * The reader's timed frames (runtime/cameras/ffmpeg.ts; docs/recording-and-live-view.md "Boxes
 * on the frame shown"): RTSP readers keep each frame's reception time and print it with showinfo.
 */
import { describe, expect, it } from 'vitest'
import { burstCommand, isShowinfo, parseShowinfo, readerArgs, timedVideoFilter } from '../../runtime/cameras/ffmpeg.ts'

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

  it('a camera\'s own reader with a burst rate: a select at that rate, a framestep back to its usual rate that stdin commands turn off and on', () => {
    const rtsp = { sourceType: 'rtsp' as const, input: 'rtsp://127.0.0.1:8554/cam' }
    const args = readerArgs(rtsp, { fps: 1, burstFps: 10, timeoutMs: 5000, rtspTimeoutOption: '-timeout', maxSide: null })
    expect(args[args.indexOf('-vf') + 1]).toBe(`${timedVideoFilter(10, null).replace(/settb=AVTB,showinfo$/, '')}framestep=step=10:enable=1,settb=AVTB,showinfo`)
    expect(args).not.toContain('-nostdin')
    // A 25 fps camera: every frame in a burst, one in 25 otherwise.
    const fast = readerArgs(rtsp, { fps: 1, burstFps: 25, sourceFps: 25, timeoutMs: 5000, rtspTimeoutOption: '-timeout', maxSide: null })
    expect(fast[fast.indexOf('-vf') + 1]).toBe('framestep=step=25:enable=1,settb=AVTB,showinfo')
    // No burst rate above the usual one: no framestep, stdin closed.
    const plain = readerArgs(rtsp, { fps: 5, burstFps: 5, timeoutMs: 5000, rtspTimeoutOption: '-timeout', maxSide: null })
    expect(plain[plain.indexOf('-vf') + 1]).toBe(timedVideoFilter(5, null))
    expect(plain).toContain('-nostdin')
    expect(burstCommand(true)).toBe('Cframestep -1 enable 0\n')
    expect(burstCommand(false)).toBe('Cframestep -1 enable 1\n')
    // ffmpeg's echo of a command is not a message worth keeping.
    expect(isShowinfo('Command reply for stream 0: ret:0 res:')).toBe(true)
    expect(isShowinfo('Enter command: <target>|all <time>|-1 <command>[ <argument>]')).toBe(true)
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
