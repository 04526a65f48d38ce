import { execFile } from 'node:child_process'
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { createRequire } from 'node:module'
import path from 'node:path'
import type { ErrorId } from '../../shared/errors/catalogue.ts'
import { projectRoot } from '../paths.ts'
import type { RelayTicket } from './credential-relay.ts'
import { ffmpegInput } from './sources/index.ts'

/** The ffmpeg executable: FFMPEG_PATH, else the binary shipped inside @ffmpeg-installer/linux-x64. */
export function ffmpegBinary(configured: string): string {
  if (configured) return configured
  const require = createRequire(path.join(projectRoot, 'package.json'))
  try {
    return path.join(path.dirname(require.resolve('@ffmpeg-installer/linux-x64/package.json')), 'ffmpeg')
  } catch {
    // Without the package (another platform, a trimmed install) the device still starts: a
    // system ffmpeg on PATH is tried, and a camera without one fails with its own error.
    return 'ffmpeg'
  }
}

/**
 * The RTSP demuxer's socket timeout option: `-stimeout` up to ffmpeg 4, `-timeout` from 5 on
 * (where 4's `-timeout` meant "listen"), read from the binary's own help.
 */
export function rtspTimeoutOption(binary: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(binary, ['-hide_banner', '-h', 'demuxer=rtsp'], { timeout: timeoutMs }, (error, stdout) => {
      if (error) return reject(new Error(`ffmpeg at ${binary} does not run: ${error.message}`))
      resolve(/^\s*-stimeout\b/m.test(stdout) ? '-stimeout' : '-timeout')
    })
  })
}

/**
 * The URL with its host name replaced by an address resolved here: the static ffmpeg build
 * crashes (SIGSEGV) when it resolves a name itself. Throws a plain Error when the name does not resolve.
 */
export async function withResolvedHost(url: string, timeoutMs: number): Promise<string> {
  const parsed = new URL(url)
  const host = parsed.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host)) return url
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`host name ${host} did not resolve within ${timeoutMs} ms`)), timeoutMs) })
  try {
    const { address, family } = await Promise.race([lookup(host).catch(() => { throw new Error(`host name ${host} not found`) }), timeout])
    parsed.hostname = family === 6 ? `[${address}]` : address
    return parsed.toString()
  } finally {
    clearTimeout(timer)
  }
}

export interface InputSpec {
  /** The input's name in the source tables (sources/index.ts ffmpegInput): rtsp, mjpeg, file, usb. */
  sourceType: string
  /** URL without credentials (or the relay's loopback URL), file path or device path. */
  input: string
  /** A URL with credentials reaches ffmpeg through the relay (credential-relay.ts), never its argv. */
  ticket?: RelayTicket
}

/**
 * ffmpeg arguments that open one source: its plugin's input options (runtime/cameras/sources/).
 * Each source type may only use its own protocols (`-protocol_whitelist`), so a URL cannot
 * make ffmpeg read local files. With `wallclock`, a timed source's packets keep the time they
 * were received to the output (`-copyts`): two processes reading one RTSP camera then share
 * one time line (docs/recording-and-live-view.md "Boxes on the frame shown").
 */
export function inputArgs(spec: InputSpec, options: { timeoutMs: number; rtspTimeoutOption: string; wallclock?: boolean; stdin?: boolean }): string[] {
  const plugin = ffmpegInput(spec.sourceType)
  return [
    // stdin only for a reader whose rate the device raises for a while (burstCommand).
    '-hide_banner', ...(options.stdin ? [] : ['-nostdin']), '-nostats', '-loglevel', 'info',
    // 1 s of stream is enough to learn size and rate; the default 5 s delays every (re)connect.
    '-analyzeduration', '1000000',
    ...plugin.args(options), '-i', spec.input,
    ...(options.wallclock && plugin.timed ? ['-copyts'] : []),
  ]
}

/** Whether a reader of this source prints each frame's timestamp (`showinfo`) for `Frame.pts`. */
export const timedSource = (sourceType: InputSpec['sourceType']) => ffmpegInput(sourceType).timed === true

/**
 * ffmpeg arguments that read one source and write raw RGB frames to stdout at `fps`, at most `maxSide` on the longest side.
 * With `burstFps` (an RTSP source; docs/cameras-and-stream-tasks.md "Snapshots") the reader can be switched to that
 * higher rate for a while and back through its stdin (burstCommand): the frames pass a `select` at the burst rate (every
 * frame when the source is no faster), then a `framestep` that keeps one in `step` of them — about `fps` — while it is
 * enabled; disabling it lets all of them through.
 */
export function readerArgs(spec: InputSpec, options: { fps: number; timeoutMs: number; rtspTimeoutOption: string; maxSide?: number | null; sourceFps?: number | null; burstFps?: number | null }): string[] {
  if (timedSource(spec.sourceType)) {
    const burst = options.burstFps && options.burstFps > options.fps ? options.burstFps : null
    const rate = burst ?? options.fps
    // At the source's own rate every frame is kept: reception jitter (two frames arriving
    // together) would otherwise make `select` drop one as too early.
    const all = !!options.sourceFps && rate >= options.sourceFps * 0.95
    const step = burst ? Math.max(1, Math.round((all ? options.sourceFps! : burst) / options.fps)) : null
    return [
      ...inputArgs(spec, { ...options, wallclock: true, stdin: burst !== null }),
      '-map', '0:v:0', '-an', '-sn', '-dn', '-vf', timedVideoFilter(all ? null : rate, options.maxSide ?? null, step),
      // One raw frame per filtered frame, in order: the n-th showinfo line is the n-th frame.
      '-vsync', '0', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1',
    ]
  }
  return [
    ...inputArgs(spec, options),
    '-map', '0:v:0', '-an', '-sn', '-dn', '-vf', videoFilter(options.fps, options.maxSide ?? null),
    '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1',
  ]
}

/**
 * What a burst reader's stdin takes (ffmpeg's interactive `C` command, to every filter named framestep): `true` turns
 * the framestep's timeline off, so every frame the select keeps comes out (the burst rate); `false` back to one in step.
 */
export const burstCommand = (on: boolean) => `Cframestep -1 enable ${on ? 0 : 1}\n`

/**
 * videoFilter for a source with timestamps worth keeping (`fps` null: every frame): `select` instead of `fps` (which
 * moves each frame onto its own grid of times), so each frame kept keeps the time it was
 * received. A frame is kept when it is due: on a grid of 1/fps that catches up after a gap,
 * with a 30 % tolerance for jitter (register 0 holds the time the next frame is due). Then
 * the time base in µs and `showinfo`, whose `pts:` the reader reads (after the scaler: it
 * sums the small picture's pixels).
 */
export function timedVideoFilter(fps: number | null, maxSide: number | null, step: number | null = null): string {
  const period = fps ? 1 / fps : 0
  const tolerance = 0.3 * period
  const select = fps ? `select='if(gte(t\\,ld(0)-${tolerance})\\,st(0\\,max(ld(0)+${period}\\,t+${period - tolerance}))*0+1\\,0)',` : ''
  const scale = maxSide ? `scale='min(iw,${maxSide})':'min(ih,${maxSide})':force_original_aspect_ratio=decrease:flags=area,` : ''
  const framestep = step ? `framestep=step=${step}:enable=1,` : ''
  return `${select}${framestep}${scale}settb=AVTB,showinfo`
}

/** A showinfo line's frame number and timestamp (µs with settb=AVTB): `[Parsed_showinfo_3 @ 0x…] n:  12 pts:1795864598635778 pts_time:…`. */
export function parseShowinfo(line: string): { n: number; pts: number } | null {
  const match = /\[Parsed_showinfo_\d+ @ [^\]]*\] n:\s*(\d+) pts:\s*(-?\d+) /.exec(line)
  return match ? { n: Number(match[1]), pts: Number(match[2]) } : null
}

/** A line of showinfo's (its frame lines and their continuation): not a message worth keeping. */
export const isShowinfo = (line: string) => line.includes('[Parsed_showinfo_') || isCommandEcho(line)

/** ffmpeg's answer to a command on its stdin (burstCommand): not a message worth keeping either. */
const isCommandEcho = (line: string) => line.startsWith('Enter command: ') || line.startsWith('Command reply for stream ')

/**
 * The rate first (fewer frames to scale), then the analysis size: the longest side at most
 * `maxSide`, the aspect kept, never enlarged. The scaler also converts to RGB, in one pass.
 */
export function videoFilter(fps: number, maxSide: number | null): string {
  if (!maxSide) return `fps=${fps}`
  // 'area' averages the pixels it merges: sharper than bilinear when shrinking, and cheaper (bench/decode-cpu.bench.ts).
  return `fps=${fps},scale='min(iw,${maxSide})':'min(ih,${maxSide})':force_original_aspect_ratio=decrease:flags=area`
}

export interface StreamInfo {
  /** The source's frame rate (from its stream line: `fps`, else `tbr`). */
  fps: number | null
  codec: string
  /** The source's picture size. */
  width: number | null
  height: number | null
}

/** Reads ffmpeg's description of the input's video stream, e.g. `Stream #0:0(eng): Video: h264 (Main) ..., 768x432, ..., 10 fps, 10 tbr`. */
export function parseInputStream(line: string): StreamInfo | null {
  const match = /Stream #0:\d+.*?: Video: (\w+)/.exec(line)
  if (!match) return null
  const fps = /, ([\d.]+) fps/.exec(line) ?? /, ([\d.]+)k? tbr/.exec(line)
  const size = /, (\d+)x(\d+)/.exec(line)
  return { codec: match[1]!, fps: fps ? Number(fps[1]) : null, width: size ? Number(size[1]) : null, height: size ? Number(size[2]) : null }
}

/** Reads the size of the raw frames ffmpeg writes, from its output stream line. */
export function parseOutputSize(line: string): { width: number; height: number } | null {
  if (!/Stream #0:\d+.*: Video: rawvideo/.test(line)) return null
  const match = /, (\d+)x(\d+)/.exec(line)
  return match ? { width: Number(match[1]), height: Number(match[2]) } : null
}

/**
 * The last line of an ffmpeg run's messages that says what went wrong (ffmpeg prints its error
 * last), or null when none does: indented lines describe streams and metadata, and the top-level
 * lines of a run that went well (its input and output headers, the stream mapping, the final
 * statistics) are no error either — a stream that ended reads "the stream ended", not
 * "Output #0, rawvideo, to 'pipe:1':".
 */
export function errorLine(lines: readonly string[]): string | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!
    if (/^\s/.test(line) || /^(Exiting normally|Conversion failed|frame=|video:|Input #\d|Output #\d|Stream mapping:|Press \[q\])/.test(line)) continue
    return line.trim()
  }
  return null
}

/** The catalogue error a failed ffmpeg run stands for, from its last messages. */
export function classifyFailure(messages: string): ErrorId {
  if (/401 Unauthorized|403 Forbidden|authorization failed/i.test(messages)) return 'CameraAuthFailed'
  if (/404 Not Found|Server returned 4\d\d|No such file or directory/i.test(messages)) return 'CameraStreamNotFound'
  if (/Connection refused|No route to host|Network is unreachable|timed out|Connection timed out|Failed to resolve|Name or service not known|Cannot assign requested address|Host is unreachable|Immediate exit requested|Operation timed out/i.test(messages)) return 'CameraUnreachable'
  if (/Decoder \(codec [^)]*\) not found|Invalid data found when processing input|does not contain any stream|Stream map '0:v:0' matches no streams|matches no streams|could not find codec parameters|Unsupported codec|no decoder/i.test(messages)) return 'CameraUnsupportedCodec'
  return 'CameraSourceFailed'
}

/**
 * The error of an ffmpeg run that ended. A source that never described its stream within the
 * connect timeout did not answer, whatever ffmpeg calls it at the stage where it gave up ("Invalid
 * data found" when an RTSP reply times out).
 */
export function classifyExit(messages: string, run: { describedInput: boolean; elapsedMs: number; connectTimeoutMs: number }): ErrorId {
  const known = classifyFailure(messages)
  const silent = !run.describedInput && run.elapsedMs >= run.connectTimeoutMs
  return silent && (known === 'CameraUnsupportedCodec' || known === 'CameraSourceFailed') ? 'CameraUnreachable' : known
}
