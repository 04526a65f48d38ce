import { spawn } from 'node:child_process'

/**
 * ffmpeg steps of the audio area (spec 4.10 Audio): probe an upload, normalize it to the
 * stored MP3, decode a stored file, convert it for a column. Every run reads only local files
 * (`-protocol_whitelist file`) through the demuxers of AUDIO_FORMATS, so an upload that is a
 * playlist or a concat script cannot make ffmpeg open anything else; every run has a deadline.
 */

/** Containers an audio upload may be (ffmpeg demuxer names); `mov` covers m4a/mp4 with AAC. */
export const AUDIO_FORMATS = ['wav', 'mp3', 'ogg', 'flac', 'aac', 'mov', 'mp4', 'm4a'] as const
/** EBU R128 target of every stored file: -16 LUFS integrated, -1.5 dBTP (loudnorm's speech/alert setting). */
export const TARGET_LOUDNESS = -16
const LOUDNORM = `loudnorm=I=${TARGET_LOUDNESS}:TP=-1.5:LRA=11:print_format=json`
export const STORED_SAMPLE_RATE = 44_100

const INPUT = ['-hide_banner', '-nostdin', '-nostats', '-protocol_whitelist', 'file', '-format_whitelist', AUDIO_FORMATS.join(',')]

export interface ProbedAudio {
  format: string
  /** From the container; null when it does not say. */
  durationMs: number | null
  sampleRate: number
  channels: number
}

export class AudioFfmpegError extends Error {
  constructor(readonly reason: string) {
    super(reason)
  }
}

interface Run { code: number | null; stderr: string; stdoutBytes: number; stdout: Buffer[] | null }

/** Runs ffmpeg to its end (or kills it at the deadline); keeps the last 64 KB of stderr. */
function run(binary: string, args: string[], options: { timeoutMs: number; keepStdout?: boolean; signal?: AbortSignal }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    let stdoutBytes = 0
    const stdout: Buffer[] | null = options.keepStdout ? [] : null
    let timedOut = false
    const kill = () => child.kill('SIGKILL')
    const timer = setTimeout(() => { timedOut = true; kill() }, options.timeoutMs)
    options.signal?.addEventListener('abort', kill, { once: true })
    child.stdout.on('data', (chunk: Buffer) => { stdoutBytes += chunk.length; stdout?.push(chunk) })
    child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString('utf8')).slice(-65_536) })
    child.on('error', (error) => { clearTimeout(timer); reject(new Error(`ffmpeg at ${binary} does not run: ${error.message}`)) })
    child.on('close', (code) => {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', kill)
      if (timedOut) return reject(new AudioFfmpegError(`ffmpeg did not finish within ${options.timeoutMs} ms`))
      resolve({ code, stderr, stdoutBytes, stdout })
    })
  })
}

/** The last meaningful error line of ffmpeg's messages, without the file's path. */
const lastError = (stderr: string, file: string) =>
  (stderr.trim().split('\n').reverse().find((line) => line.trim() && !line.startsWith('  ')) ?? 'ffmpeg failed').replaceAll(file, '<file>').trim().slice(0, 300)

const durationOf = (stderr: string) => {
  const m = /Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)/.exec(stderr)
  return m ? Math.round((Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3])) * 1000) : null
}

/** Reads the container and first audio stream (`ffmpeg -i`; no decoding). Throws AudioFfmpegError when it is not audio ffmpeg may read. */
export async function probeAudio(binary: string, file: string, timeoutMs: number): Promise<ProbedAudio> {
  const { stderr } = await run(binary, [...INPUT, '-i', file], { timeoutMs })
  const input = /Input #0, ([\w,]+), from/.exec(stderr)
  if (!input) throw new AudioFfmpegError(/not on whitelist/.test(stderr) ? 'not a supported audio format (WAV, MP3, Ogg, FLAC, AAC/M4A)' : lastError(stderr, file))
  const stream = /Stream #0:\d+.*?: Audio: ([^\n]+)/.exec(stderr)
  if (!stream) throw new AudioFfmpegError('the file has no audio stream')
  const rate = /(\d+) Hz/.exec(stream[1]!)
  const layout = /Hz, ([^,]+)/.exec(stream[1]!)?.[1] ?? ''
  const channels = layout === 'mono' ? 1 : layout === 'stereo' ? 2 : Number(/(\d+) channels/.exec(layout)?.[1] ?? (/(\d)\.(\d)/.test(layout) ? Number(layout[0]) + Number(layout[2]) : 0))
  if (!rate || channels < 1) throw new AudioFfmpegError('the audio stream has no sample rate or channel layout')
  return { format: input[1]!.split(',')[0]!, durationMs: durationOf(stderr), sampleRate: Number(rate[1]), channels }
}

/**
 * Decodes the first audio stream of `file` (at most `maxMs` and a little: a header that lies
 * about the duration cannot make the device decode more), normalizes its loudness
 * (EBU R128, single-pass loudnorm) and writes it as MP3 to `out`. Answers the input's measured
 * integrated loudness (null when too short to measure).
 */
export async function normalizeToMp3(binary: string, file: string, out: string, options: { channels: number; maxMs: number; timeoutMs: number }): Promise<{ inputLoudness: number | null }> {
  const { code, stderr } = await run(binary, [
    ...INPUT, '-i', file, '-map', '0:a:0', '-vn', '-sn', '-dn', '-t', String((options.maxMs + 1000) / 1000),
    '-af', LOUDNORM, '-ar', String(STORED_SAMPLE_RATE), '-ac', String(Math.min(2, options.channels)),
    '-c:a', 'libmp3lame', '-q:a', '4', '-map_metadata', '-1', '-f', 'mp3', '-y', out,
  ], { timeoutMs: options.timeoutMs })
  if (code !== 0) throw new AudioFfmpegError(lastError(stderr, file))
  const json = /\{[^{}]*"input_i"[^{}]*\}/.exec(stderr)
  const inputI = json ? Number(JSON.parse(json[0]).input_i) : NaN
  return { inputLoudness: Number.isFinite(inputI) ? Math.round(inputI * 100) / 100 : null }
}

/** Decodes the whole file to PCM and counts the samples: the duration a player gets. */
export async function decodedAudio(binary: string, file: string, timeoutMs: number): Promise<{ durationMs: number; sampleRate: number; channels: number }> {
  const probed = await probeAudio(binary, file, timeoutMs)
  const { code, stderr, stdoutBytes } = await run(binary, [...INPUT, '-i', file, '-map', '0:a:0', '-f', 's16le', '-acodec', 'pcm_s16le', 'pipe:1'], { timeoutMs })
  if (code !== 0) throw new AudioFfmpegError(lastError(stderr, file))
  const samples = stdoutBytes / 2 / probed.channels
  return { durationMs: Math.round((samples / probed.sampleRate) * 1000), sampleRate: probed.sampleRate, channels: probed.channels }
}

/** What a column is sent for each format: ffmpeg output arguments and the Content-Type. */
export const PUSH_FORMATS = {
  mp3: { contentType: 'audio/mpeg', args: null },
  wav: { contentType: 'audio/wav', args: ['-c:a', 'pcm_s16le', '-f', 'wav'] },
  // G.711 µ-law, 8 kHz mono: what Axis network speakers take on /axis-cgi/audio/transmit.cgi.
  mulaw: { contentType: 'audio/basic', args: ['-ar', '8000', '-ac', '1', '-c:a', 'pcm_mulaw', '-f', 'mulaw'] },
} as const

/** The stored MP3 converted for a column (in memory: the duration limit bounds its size). */
export async function convertForPush(binary: string, file: string, format: Exclude<keyof typeof PUSH_FORMATS, 'mp3'>, options: { timeoutMs: number; signal?: AbortSignal }): Promise<Buffer> {
  const { code, stderr, stdout } = await run(binary, [...INPUT, '-i', file, '-map', '0:a:0', ...PUSH_FORMATS[format].args, 'pipe:1'], { ...options, keepStdout: true })
  if (code !== 0) throw new AudioFfmpegError(lastError(stderr, file))
  const bytes = Buffer.concat(stdout!)
  return format === 'wav' ? withWavSizes(bytes) : bytes
}

/** ffmpeg cannot seek back in a pipe to write the RIFF and data sizes of a WAV: they are set here. */
export function withWavSizes(wav: Buffer): Buffer {
  if (wav.length < 12 || wav.toString('ascii', 0, 4) !== 'RIFF') return wav
  wav.writeUInt32LE(wav.length - 8, 4)
  for (let at = 12; at + 8 <= wav.length;) {
    const id = wav.toString('ascii', at, at + 4)
    if (id === 'data') {
      wav.writeUInt32LE(wav.length - at - 8, at + 4)
      break
    }
    at += 8 + wav.readUInt32LE(at + 4)
  }
  return wav
}
