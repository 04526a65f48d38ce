/**
 * Audio over HTTP on the built device (spec 4.10 Audio, 4.12): real files made with ffmpeg go
 * through the upload protocol, are checked and loudness-normalized; a network speaker on
 * loopback receives them, and what it received is decoded here with ffmpeg and compared with
 * the file's own audio (duration, pitch).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { startSpeaker, type SpeakerReceiver } from '../helpers/speaker-receiver.ts'

const FFMPEG = path.resolve('node_modules/@ffmpeg-installer/linux-x64/ffmpeg')
const work = mkdtempSync(path.join(tmpdir(), 'audio-test-'))
const SECONDS = 3
const PITCH = 440
const LIMIT_MS = 5000

/** A sine of `seconds` at `pitch` Hz, quiet (-30 dB), mono 44.1 kHz, in the format of `name`'s extension. */
function tone(name: string, seconds: number, pitch = PITCH): Buffer {
  const file = path.join(work, name)
  execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=${pitch}:sample_rate=44100:duration=${seconds}`, '-af', 'volume=-30dB', '-ac', '1', file])
  return readFileSync(file)
}

/** Decodes audio bytes with ffmpeg to mono 16-bit PCM at `rate` (inputArgs name a raw format). */
function pcm(bytes: Buffer, rate: number, inputArgs: string[] = []): Int16Array {
  const file = path.join(work, `decode-${Math.random().toString(36).slice(2)}`)
  writeFileSync(file, bytes)
  const out = execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', ...inputArgs, '-i', file, '-ac', '1', '-ar', String(rate), '-f', 's16le', 'pipe:1'], { maxBuffer: 64 * 1024 * 1024 })
  return new Int16Array(out.buffer, out.byteOffset, out.length / 2)
}

/** Pitch from upward zero crossings over the middle of the signal (edges have fades and encoder padding). */
function pitchOf(samples: Int16Array, rate: number): number {
  const from = Math.floor(samples.length * 0.2), to = Math.floor(samples.length * 0.8)
  let crossings = 0
  for (let i = from + 1; i < to; i++) if (samples[i - 1]! < 0 && samples[i]! >= 0) crossings++
  return crossings / ((to - from) / rate)
}

/** Integrated loudness (LUFS) that ffmpeg's EBU R128 meter measures. */
function loudnessOf(bytes: Buffer): number {
  const file = path.join(work, 'loudness.mp3')
  writeFileSync(file, bytes)
  const { stderr } = spawnSync(FFMPEG, ['-hide_banner', '-nostats', '-i', file, '-af', 'ebur128', '-f', 'null', '-'], { encoding: 'utf8' })
  return Number(/Integrated loudness:\s+I:\s+(-?[\d.]+) LUFS/.exec(stderr)?.[1])
}

test.override('deviceOptions', { env: { AUDIO_MAX_DURATION_MS: String(LIMIT_MS) } })

test.describe('audio files and columns over HTTP', () => {
  let device: DeviceProcess
  let speaker: SpeakerReceiver
  let mtk: string
  const post = async (route: string, body: unknown) => (await device.post(`/gtw/cwai/Audio/${route}`, body, mtk)).body
  const get = (route: string, headers: Record<string, string> = {}) => fetch(`${device.url}${route}`, { headers: { mtk, ...headers } })

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    speaker = await startSpeaker()
  })
  test.afterAll(async () => {
    await speaker?.close()
    rmSync(work, { recursive: true, force: true })
  })

  let audioId: string
  test('takes a real WAV through the upload protocol, normalizes its loudness and serves it ranged', async () => {
    const wav = tone('tone.wav', SECONDS)
    const uploadId = await uploadFile(device, mtk, wav, 'door-chime.wav', 'audio')
    const added = await post('AddAudioFile', { uploadId })
    expect(added.resCode).toBe(1)
    audioId = added.resData.audioId
    expect(added.resData).toMatchObject({ audioName: 'door-chime.wav', originalName: 'door-chime.wav', sourceFormat: 'wav', sampleRate: 44100, channels: 1, targetLoudness: -16 })
    // MP3 adds at most one frame of padding (1152 samples, 26 ms) to the 3 s.
    expect(Math.abs(added.resData.durationMs - SECONDS * 1000)).toBeLessThanOrEqual(60)
    expect(added.resData.inputLoudness).toBeLessThan(-30)
    // The upload is consumed: it cannot make a second file.
    expect((await post('AddAudioFile', { uploadId })).resMsg[0].messageKey).toBe('api.error.uploadConsumed')

    const whole = await get(`/gtw/cwai/Audio/AudioFilePreview?audioId=${audioId}`)
    expect(whole.status).toBe(200)
    expect(whole.headers.get('content-type')).toBe('audio/mpeg')
    const mp3 = Buffer.from(await whole.arrayBuffer())
    expect(mp3.length).toBe(added.resData.sizeBytes)
    expect(Math.abs(loudnessOf(mp3) - -16)).toBeLessThanOrEqual(1.5)
    expect(pitchOf(pcm(mp3, 44100), 44100)).toBeCloseTo(PITCH, -1)
    const part = await get(`/gtw/cwai/Audio/AudioFilePreview?audioId=${audioId}`, { range: 'bytes=100-199' })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${mp3.length}`)
    expect(Buffer.from(await part.arrayBuffer())).toEqual(mp3.subarray(100, 200))
    expect((await get(`/gtw/cwai/Audio/AudioFilePreview?audioId=${audioId}`, { range: `bytes=${mp3.length}-` })).status).toBe(416)
    expect((await fetch(`${device.url}/gtw/cwai/Audio/AudioFilePreview?audioId=${audioId}`)).status).toBe(401)

    const test = await post('PlayTestAudioFile', { audioId })
    expect(test.resData).toEqual({ audioId, decodedDurationMs: added.resData.durationMs, sampleRate: 44100, channels: 1, previewUrl: `/gtw/cwai/Audio/AudioFilePreview?audioId=${audioId}` })
    const page = await post('AudioFilePage', { pageNum: 1, pageSize: 10 })
    expect(page.resData.total).toBe(1)
    expect(page.resData.rows[0]).toEqual(added.resData)
  })

  test('refuses a file that is not audio, a file over the duration limit and another purpose, keeping the upload', async () => {
    const noise = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256))
    const badUpload = await uploadFile(device, mtk, noise, 'chime.wav', 'audio')
    const bad = await post('AddAudioFile', { uploadId: badUpload })
    expect(bad.resMsg[0]).toMatchObject({ messageKey: 'api.error.AudioFileInvalid', msgCode: '8102', recommendedAction: 'CHECK_UPLOAD_PARAMETERS' })
    expect(bad.resMsg[0].details.reason).not.toContain(device.dataDir)
    // The refused upload is still complete: the client can release it.
    expect((await device.post('/gtw/cwai/atomic/model/cancelUpload', { uploadId: badUpload }, mtk)).body.resCode).toBe(1)

    const svg = await uploadFile(device, mtk, Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'chime.mp3', 'audio')
    expect((await post('AddAudioFile', { uploadId: svg })).resMsg[0].messageKey).toBe('api.error.AudioFileInvalid')

    const long = await uploadFile(device, mtk, tone('long.flac', 6), 'long.flac', 'audio')
    expect((await post('AddAudioFile', { uploadId: long })).resMsg[0]).toMatchObject({ messageKey: 'api.error.AudioFileTooLong', details: { durationMs: 6000, limitMs: LIMIT_MS } })

    const image = await uploadFile(device, mtk, tone('other.wav', 1), 'other.wav', 'image')
    expect((await post('AddAudioFile', { uploadId: image })).resMsg[0].messageKey).toBe('api.error.uploadPurposeMismatch')
    expect((await post('AudioFilePage', { pageNum: 1, pageSize: 10 })).resData.total).toBe(1)
    expect((await post('AddAudioFile', { uploadId: 'x'.repeat(201) })).resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam' })
  })

  test('plays the file on columns in each format, with Basic and Digest credentials, and the speaker gets the file\'s audio', async () => {
    const cases = [
      { format: 'mp3', auth: 'basic', contentType: 'audio/mpeg', decode: [] as string[], rate: 44100 },
      { format: 'wav', auth: 'digest', contentType: 'audio/wav', decode: [], rate: 44100 },
      { format: 'mulaw', auth: 'digest', contentType: 'audio/basic', decode: ['-f', 'mulaw', '-ar', '8000', '-ac', '1'], rate: 8000 },
    ] as const
    for (const c of cases) {
      speaker.auth = { kind: c.auth, username: 'operator', password: `s3cret-${c.format}` }
      speaker.received.length = 0
      const added = await post('AddAudioColumn', { columnName: `Gate ${c.format}`, url: `${speaker.url}/axis-cgi/audio/transmit.cgi`, format: c.format, username: 'operator', password: `s3cret-${c.format}` })
      expect(added.resData).toMatchObject({ protocol: 'http-push', method: 'POST', format: c.format, username: 'operator', passwordSet: true })
      expect(JSON.stringify(added)).not.toContain('s3cret')
      const played = await post('PlayOnAudioColumn', { columnId: added.resData.columnId, audioId })
      expect(played.resCode).toBe(1)
      const delivered = speaker.received.at(-1)!
      expect(delivered).toMatchObject({ method: 'POST', url: '/axis-cgi/audio/transmit.cgi', contentType: c.contentType })
      expect(played.resData).toMatchObject({ format: c.format, bytesSent: delivered.body.length, httpStatus: 200 })
      // Digest: the first request is answered by a challenge, the second carries the answer.
      expect(speaker.received.length).toBe(c.auth === 'digest' ? 2 : 1)
      const samples = pcm(delivered.body, c.rate, [...c.decode])
      expect(Math.abs((samples.length / c.rate) * 1000 - SECONDS * 1000)).toBeLessThanOrEqual(60)
      expect(Math.abs(pitchOf(samples, c.rate) - PITCH)).toBeLessThanOrEqual(5)
    }
    const columns = await post('AudioColumnPage', { pageNum: 1, pageSize: 10 })
    expect(columns.resData.total).toBe(3)
    expect(JSON.stringify(columns)).not.toContain('s3cret')
  })

  test('tests a column\'s connectivity and maps a speaker\'s refusals to their errors', async () => {
    speaker.auth = { kind: 'basic', username: 'operator', password: 'right' }
    const column = (await post('AddAudioColumn', { columnName: 'Hall', url: `http://operator:wrong@${speaker.url.slice(7)}/play` })).resData
    expect(column).toMatchObject({ url: `${speaker.url}/play`, username: 'operator', passwordSet: true })
    expect((await post('TestAudioColumn', { columnId: column.columnId })).resData).toMatchObject({ reachable: true, httpStatus: 401, authOk: false, error: null })
    expect((await post('PlayOnAudioColumn', { columnId: column.columnId, audioId })).resMsg[0]).toMatchObject({ messageKey: 'api.error.AudioColumnAuthFailed', details: { status: 401 } })

    await post('UpdateAudioColumn', { columnId: column.columnId, password: 'right' })
    expect((await post('TestAudioColumn', { columnId: column.columnId })).resData).toMatchObject({ reachable: true, httpStatus: 200, authOk: true })
    speaker.status = 404
    expect((await post('PlayOnAudioColumn', { columnId: column.columnId, audioId })).resMsg[0]).toMatchObject({ messageKey: 'api.error.AudioColumnRejected', details: { status: 404 } })
    speaker.status = 200

    // A port nothing listens on: refused at once.
    const closed = (await post('AddAudioColumn', { columnName: 'Gone', url: 'http://127.0.0.1:9/play', timeoutMs: 1000 })).resData
    expect((await post('TestAudioColumn', { columnId: closed.columnId })).resData).toMatchObject({ reachable: false, connectMs: null, error: 'ECONNREFUSED' })
    expect((await post('PlayOnAudioColumn', { columnId: closed.columnId, audioId })).resMsg[0]).toMatchObject({ messageKey: 'api.error.AudioColumnUnreachable', retryable: true, details: { reason: 'ECONNREFUSED' } })

    expect((await post('AddAudioColumn', { columnName: 'Bad', url: 'ftp://127.0.0.1/x' })).resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/url' } })
    expect((await post('AddAudioColumn', { columnName: 'Bad', url: `${speaker.url}/x`, format: 'ogg' })).resMsg[0].messageKey).toBe('api.error.InvalidParam')
    expect((await post('PlayOnAudioColumn', { columnId: 'nope', audioId })).resMsg[0].messageKey).toBe('api.error.AudioColumnNotFound')
    expect((await post('PlayOnAudioColumn', { columnId: column.columnId, audioId: 'nope' })).resMsg[0].messageKey).toBe('api.error.AudioFileNotFound')
    expect((await post('DeleteAudioColumn', { columnId: closed.columnId })).resCode).toBe(1)
    expect((await post('DeleteAudioColumn', { columnId: closed.columnId })).resMsg[0].messageKey).toBe('api.error.AudioColumnNotFound')
  })

  test('deletes a file and its stored MP3', async () => {
    expect((await post('DeleteAudioFile', { audioId })).resCode).toBe(1)
    expect((await post('AudioFilePage', { pageNum: 1, pageSize: 10 })).resData.total).toBe(0)
    const gone = await get(`/gtw/cwai/Audio/AudioFilePreview?audioId=${audioId}`)
    expect((await gone.json()).resMsg[0].messageKey).toBe('api.error.AudioFileNotFound')
    expect((await post('DeleteAudioFile', { audioId })).resMsg[0].messageKey).toBe('api.error.AudioFileNotFound')
  })
})
