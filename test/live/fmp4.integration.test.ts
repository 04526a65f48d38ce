import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { codecOf, Fmp4Splitter, shiftedMoof, timescaleOf } from '../../runtime/live/fmp4.ts'
import { LIVE_OUTPUT } from '../../runtime/live/tap.ts'
import { FFMPEG } from '../helpers/media.ts'
import { PERSON_VIDEO } from '../helpers/video.ts'

const SECONDS = 6

/** The live output of ffmpeg for the first seconds of the footage, as the tap gets it. */
const stream = execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-t', String(SECONDS), '-i', PERSON_VIDEO, ...LIVE_OUTPUT], { maxBuffer: 64 * 1024 * 1024 })
/** Its packets in decode order, by ffprobe reading the same bytes: whether each is a key frame. */
const packetKeys = execFileSync('ffprobe', ['-v', 'error', '-i', 'pipe:0', '-select_streams', 'v:0', '-show_entries', 'packet=flags', '-of', 'csv=p=0'], { input: stream, encoding: 'utf8' })
  .split('\n').filter((l) => l.trim()).map((flags) => flags.includes('K'))

describe('fragmented MP4 splitter of the live view', () => {
  it('finds the init segment, a fragment per frame, and exactly the key frames', () => {
    const splitter = new Fmp4Splitter()
    const fragments = splitter.push(stream)
    expect(splitter.init!.toString('latin1', 4, 8)).toBe('ftyp')
    expect(splitter.init!.includes(Buffer.from('moov'))).toBe(true)
    // 10 frames a second, a fragment every 100 ms at most: one per frame (the copy ends on the key frame after 6 s).
    expect(fragments.length).toBeGreaterThanOrEqual(SECONDS * 10)
    expect(fragments.map((f) => f.keyframe)).toEqual(packetKeys)
    // The footage's group of pictures is 1 s: a key frame every 10th.
    expect(packetKeys.filter(Boolean).length).toBeGreaterThanOrEqual(SECONDS)
    expect(fragments[0]!.keyframe).toBe(true)
    // Together they are the stream, byte for byte, but for the index ffmpeg appends when it ends (mfra).
    const joined = Buffer.concat([splitter.init!, ...fragments.flatMap((f) => [f.moof, f.mdat])])
    expect(joined).toEqual(stream.subarray(0, joined.length))
    expect(stream.toString('latin1', joined.length + 4, joined.length + 8)).toBe('mfra')
    expect(stream.readUInt32BE(joined.length)).toBe(stream.length - joined.length)
  })

  it('reads the track\'s timescale, in which the fragments\' decode times count (ffprobe\'s time base of the same bytes)', () => {
    const splitter = new Fmp4Splitter()
    const fragments = splitter.push(stream)
    const timeBase = execFileSync('ffprobe', ['-v', 'error', '-i', 'pipe:0', '-select_streams', 'v:0', '-show_entries', 'stream=time_base', '-of', 'csv=p=0'], { input: stream, encoding: 'utf8' }).trim()
    const timescale = timescaleOf(splitter.init!)
    expect(`1/${timescale}`).toBe(timeBase)
    // 10 frames a second: the eleventh fragment starts 1 s after the first.
    expect((fragments[10]!.decodeTime - fragments[0]!.decodeTime) / timescale!).toBeCloseTo(1, 2)
  })

  it('gives the same fragments whatever the chunks the bytes arrive in', () => {
    const whole = new Fmp4Splitter().push(stream)
    const splitter = new Fmp4Splitter()
    const pieces = []
    for (let at = 0; at < stream.length; at += 1000) pieces.push(...splitter.push(stream.subarray(at, at + 1000)))
    expect(pieces.map((f) => [f.keyframe, f.moof.length, f.mdat.length, f.decodeTime])).toEqual(whole.map((f) => [f.keyframe, f.moof.length, f.mdat.length, f.decodeTime]))
  })

  it('names the codec from the avcC box (profile, constraints, level)', () => {
    const splitter = new Fmp4Splitter()
    splitter.push(stream)
    // The footage is H.264 Main (77 = 0x4d), level 3.1 (0x1f) by ffprobe.
    const level = Number(execFileSync('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=level', '-of', 'csv=p=0', PERSON_VIDEO], { encoding: 'utf8' }).trim())
    expect(codecOf(splitter.init!)).toBe(`avc1.4d40${level.toString(16).padStart(2, '0')}`)
  })

  it('moves a fragment\'s decode time back, so that a viewer joining later starts at 0', () => {
    const fragments = new Fmp4Splitter().push(stream)
    const joined = fragments.findIndex((f, i) => i > 0 && f.keyframe)
    const start = fragments[joined]!.decodeTime
    expect(start).toBeGreaterThan(0)
    const shifted = fragments.slice(joined).map((f) => ({ ...f, moof: shiftedMoof(f.moof, start) }))
    // Read again from the bytes: the same fragments, each earlier by `start`.
    const again = new Fmp4Splitter()
    const init = new Fmp4Splitter()
    init.push(stream)
    const reread = again.push(Buffer.concat([init.init!, ...shifted.flatMap((f) => [f.moof, f.mdat])]))
    expect(reread.map((f) => f.decodeTime)).toEqual(fragments.slice(joined).map((f) => f.decodeTime - start))
    expect(reread[0]!.decodeTime).toBe(0)
    // The original is untouched.
    expect(new Fmp4Splitter().push(stream)[joined]!.decodeTime).toBe(start)
  })

  it('refuses a stream that is not MP4', () => {
    expect(() => new Fmp4Splitter().push(Buffer.from('\x00\x00\x00\x04junkjunkjunk', 'latin1'))).toThrow(/not a fragmented MP4/)
  })
})
