import { monotonicNow } from '../../../shared/clock.ts'
import { ApiError } from '../../../shared/errors/index.ts'
import { loadSharp } from '../../load-sharp.ts'
import { failure } from '../failure.ts'
import type { Frame, Reader, ReaderHandlers, ReaderTiming } from '../reader.ts'

/**
 * Polls an HTTP JPEG snapshot URL at the reader's rate (ffmpeg cannot re-read one URL as a
 * stream): each answer is decoded to RGB with sharp. Errors map to the same keys as ffmpeg's.
 */
export class SnapshotReader implements Reader {
  private stopped = false
  private timer: NodeJS.Timeout | null = null
  private controller = new AbortController()
  private running: Promise<void> = Promise.resolve()

  constructor(
    private readonly url: string,
    private readonly authorization: string | null,
    private readonly timing: ReaderTiming & { maxBytes: number },
    private readonly handlers: ReaderHandlers,
  ) {}

  readonly pid = null

  start(): void {
    this.handlers.onInfo({ fps: this.timing.fps, codec: 'jpeg' })
    const tick = () => {
      if (this.stopped) return
      this.running = this.poll().then((ok) => {
        if (!this.stopped && ok) this.timer = setTimeout(tick, 1000 / this.timing.fps)
      })
    }
    tick()
  }

  private async poll(): Promise<boolean> {
    try {
      const frame = await fetchSnapshot(this.url, this.authorization, this.timing, this.controller.signal)
      if (this.stopped) return false
      this.handlers.onFrame(frame)
      return true
    } catch (error) {
      if (this.stopped) return false
      this.handlers.onFailure(error instanceof ApiError ? error : failure('CameraSourceFailed', (error as Error).message))
      return false
    }
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.controller.abort()
    await this.running
  }
}

/** The content type an HTTP source answers with (it picks the HTTP kind, sources/http.ts). */
export async function httpContentType(url: string, authorization: string | null, timeoutMs: number): Promise<string> {
  const response = await request(url, authorization, timeoutMs, new AbortController().signal)
  const type = response.headers.get('content-type') ?? ''
  await response.body?.cancel().catch(() => {})
  return type
}

async function request(url: string, authorization: string | null, timeoutMs: number, signal: AbortSignal): Promise<Response> {
  let response: Response
  try {
    response = await fetch(url, {
      headers: authorization ? { authorization } : {},
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      redirect: 'error',
    })
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : cause?.code ?? cause?.message ?? (error as Error).message
    throw failure('CameraUnreachable', reason)
  }
  if (response.status === 401 || response.status === 403) throw failure('CameraAuthFailed', `HTTP ${response.status}`)
  if (response.status === 404 || response.status === 410) throw failure('CameraStreamNotFound', `HTTP ${response.status}`)
  if (!response.ok) throw failure('CameraSourceFailed', `HTTP ${response.status}`)
  return response
}

async function fetchSnapshot(url: string, authorization: string | null, timing: ReaderTiming & { maxBytes: number }, signal: AbortSignal): Promise<Frame> {
  const { maxBytes, maxSide } = timing
  const response = await request(url, authorization, timing.connectTimeoutMs, signal)
  const chunks: Buffer[] = []
  let total = 0
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.length
    if (total > maxBytes) throw failure('CameraUnsupportedCodec', `the snapshot is larger than ${maxBytes} bytes`)
    chunks.push(Buffer.from(chunk))
  }
  const sharp = await loadSharp()
  try {
    const picture = sharp(Buffer.concat(chunks))
    const { width, height } = await picture.metadata()
    if (maxSide) picture.resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true })
    const { data, info } = await picture.removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true })
    return { rgb: data, width: info.width, height: info.height, source: { width: width ?? info.width, height: height ?? info.height }, time: Date.now(), at: monotonicNow() }
  } catch (error) {
    throw failure('CameraUnsupportedCodec', `the snapshot is not an image the device can decode (${(error as Error).message})`)
  }
}
