/**
 * The transport of the device client (spec 2.1): one POST per call, the envelope decides;
 * downloads, GETs of files and pictures. `call` is typed by the handlers' own route list
 * (runtime/client/api.ts): a route of the device gives its request and `resData` types.
 */
import { deadline } from '../abort.ts'
import type { ApiRequest, ApiResponse, ApiRoute } from './api.ts'
import { DeviceError, NetworkError } from './errors.ts'
import type { DownloadedFile, Envelope } from './types.ts'

export interface ClientOptions {
  /** Device base address, e.g. `http://192.168.1.10:8080`; '' for the console's own origin. */
  baseUrl: string
  /** Session token from a previous sign-in. */
  mtk?: string | null
  fetch?: typeof fetch
  /** Called when the device answers 401 (spec 5.3), before the error is thrown. */
  onUnauthorized?: (route: string) => void
}

export interface CallOptions {
  signal?: AbortSignal
  /** Advised client timeouts (spec 8): task creation 120 s, detection 60 s. */
  timeoutMs?: number
  /**
   * Told the request-body bytes sent so far and the body's size, as they leave the browser
   * (XMLHttpRequest upload events: fetch reports no upload progress over HTTP/1.1). Node's
   * fetch has no such events: there it is not called.
   */
  onUploadProgress?: (sentBytes: number, totalBytes: number) => void
}

/**
 * The transport of DeviceClient (client.ts): every call resolves with `resData`, or throws
 * `DeviceError` (the device answered a failure) or `NetworkError` (no answer). Works in
 * Node 20 and in browsers (fetch, FormData, Blob).
 */
export class DeviceTransport {
  readonly baseUrl: string
  mtk: string | null
  private readonly fetchImpl: typeof fetch
  private readonly onUnauthorized?: (route: string) => void

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.mtk = options.mtk ?? null
    this.fetchImpl = options.fetch ?? ((...args) => globalThis.fetch(...args))
    this.onUnauthorized = options.onUnauthorized
  }

  private poller?: this
  /**
   * This client for a page's periodic reads (refreshes, "follow"): every request carries
   * `x-poll: 1`, which the device's access log writes at debug level when it succeeds
   * (docs/console-and-cli.md "Logs"), so a console left open does not flood the log. The
   * session is this client's: signing in or out here applies to it too.
   */
  get polling(): this {
    if (this.poller) return this.poller
    const poller = Object.create(this) as this
    const plain = this.fetchImpl
    const marked: typeof fetch = (input, init) => plain(input, { ...init, headers: { ...(init?.headers as Record<string, string> | undefined), 'x-poll': '1' } })
    Object.defineProperty(poller, 'fetchImpl', { value: marked })
    this.poller = poller
    return poller
  }

  /** One request; the envelope decides success (spec 2.1). */
  call<P extends ApiRoute>(route: P, body?: ApiRequest<P> | FormData, options?: CallOptions): Promise<ApiResponse<P>>
  /** A route this client's types do not know (another software version, a fleet path). */
  call<T>(route: string, body?: unknown, options?: CallOptions): Promise<T>
  async call<T>(route: string, body: unknown = {}, options: CallOptions = {}): Promise<T> {
    const { response, body: text } = await this.send(route, body, options, (r) => r.text())
    return this.judge<T>(route, response, text)
  }

  /**
   * A request whose success is a file (exports): the body as a Blob with its Content-Disposition
   * name. A failure is the envelope as for `call` (DeviceError).
   */
  download<P extends ApiRoute>(route: P, body?: ApiRequest<P>, options?: CallOptions): Promise<DownloadedFile>
  download(route: string, body?: unknown, options?: CallOptions): Promise<DownloadedFile>
  async download(route: string, body: unknown = {}, options: CallOptions = {}): Promise<DownloadedFile> {
    const { response, body: answer } = await this.send(route, body, options, async (r): Promise<Blob | string> => {
      const isFile = r.ok && !/^application\/json\b/i.test(r.headers.get('content-type') ?? '')
      return isFile ? r.blob() : r.text()
    })
    if (typeof answer !== 'string') {
      const contentType = response.headers.get('content-type') ?? 'application/octet-stream'
      return { fileName: fileNameOf(response.headers.get('content-disposition')) ?? 'download', contentType, blob: answer }
    }
    this.judge(route, response, answer)
    // A success envelope where a file was expected: not this interface.
    throw new DeviceError(route, response.status, [], answer)
  }

  /** POSTs JSON (or a form) with the mtk and reads the body; no answer → NetworkError. */
  private async send<B>(route: string, body: unknown, options: CallOptions, read: (response: Response) => Promise<B>): Promise<{ response: Response; body: B }> {
    const isForm = typeof FormData !== 'undefined' && body instanceof FormData
    const headers: Record<string, string> = isForm ? {} : { 'content-type': 'application/json' }
    if (this.mtk) headers.mtk = this.mtk
    const { signal, dispose } = deadline(options.timeoutMs, options.signal)
    try {
      const init = { method: 'POST', headers, body: isForm ? (body as FormData) : JSON.stringify(body ?? {}), signal }
      const response = options.onUploadProgress && typeof XMLHttpRequest !== 'undefined'
        ? await xhrFetch(this.baseUrl + route, init, options.onUploadProgress)
        : await this.fetchImpl(this.baseUrl + route, init)
      return { response, body: await read(response) }
    } catch (error) {
      if ((error as Error)?.name === 'AbortError' && options.signal?.aborted) throw error
      throw new NetworkError(route, error, this.baseUrl + route)
    } finally {
      dispose()
    }
  }

  /** The envelope of an answer decides: `resData`, or DeviceError (and onUnauthorized on 401, spec 5.3). */
  protected judge<T>(route: string, response: Response, text: string): T {
    let envelope: Envelope<T> | null = null
    try {
      const parsed = JSON.parse(text)
      if (parsed && typeof parsed === 'object' && 'resCode' in parsed) envelope = parsed
    } catch {
      // not an envelope: judged below by status
    }
    if (response.status === 401) this.onUnauthorized?.(route)
    if (!envelope) throw new DeviceError(route, response.status, [], text)
    if (envelope.resCode !== 1 || response.status >= 400) throw new DeviceError(route, response.status, envelope.resMsg ?? [], null)
    return envelope.resData as T
  }

  /**
   * GETs a route or URL and reads the body; no answer → NetworkError. The mtk goes only to the
   * device's own origin: a URL elsewhere (a file service, spec 2.6) never receives the session.
   */
  protected async get<B>(url: string, options: CallOptions, read: (response: Response) => Promise<B>): Promise<{ response: Response; body: B }> {
    const origin = new URL(this.baseUrl || globalThis.location.origin).origin
    const full = new URL(url.startsWith('/') ? (this.baseUrl || origin) + url : url)
    const headers: Record<string, string> = this.mtk && full.origin === origin ? { mtk: this.mtk } : {}
    const { signal, dispose } = deadline(options.timeoutMs, options.signal)
    try {
      const response = await this.fetchImpl(full.href, { headers, signal })
      return { response, body: await read(response) }
    } catch (error) {
      if ((error as Error)?.name === 'AbortError' && options.signal?.aborted) throw error
      throw new NetworkError(url, error, full.href)
    } finally {
      dispose()
    }
  }

  /**
   * A GET whose success is a file (audio preview, logo, log download; docs/audio.md, docs/system.md
   * "System settings"): authenticated by the mtk header, so the console shows it through an object URL.
   */
  async getFile(route: string, options: CallOptions = {}): Promise<DownloadedFile> {
    const { signal, dispose } = deadline(options.timeoutMs, options.signal)
    let response: Response
    let body: Blob | string
    try {
      response = await this.fetchImpl(this.baseUrl + route, { headers: this.mtk ? { mtk: this.mtk } : {}, signal })
      body = response.ok && !/^application\/json\b/i.test(response.headers.get('content-type') ?? '') ? await response.blob() : await response.text()
    } catch (error) {
      if ((error as Error)?.name === 'AbortError' && options.signal?.aborted) throw error
      throw new NetworkError(route, error, this.baseUrl + route)
    } finally {
      dispose()
    }
    if (typeof body !== 'string') return { fileName: fileNameOf(response.headers.get('content-disposition')) ?? 'download', contentType: response.headers.get('content-type') ?? 'application/octet-stream', blob: body }
    this.judge(route, response, body)
    throw new DeviceError(route, response.status, [], body)
  }

  /**
   * A picture the device serves by URL with the mtk (an `object.entered` snapshot, a
   * `fullPicture` URL, spec 2.6), as a Blob; a refusal throws DeviceError.
   */
  async picture(url: string, options: CallOptions = {}): Promise<Blob> {
    const { response, body } = await this.get(url, options, async (r): Promise<Blob | string> => (r.ok ? r.blob() : r.text()))
    if (typeof body !== 'string') return body
    this.judge(url, response, body)
    throw new DeviceError(url, response.status, [], body)
  }
}

/**
 * A POST through XMLHttpRequest, answered as a fetch Response, for its upload progress events.
 * A connection failure is a TypeError and an abort an AbortError, as fetch reports them.
 */
function xhrFetch(url: string, init: { headers: Record<string, string>; body: FormData | string; signal: AbortSignal }, onProgress: (sent: number, total: number) => void): Promise<Response> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('POST', url)
    for (const [name, value] of Object.entries(init.headers)) xhr.setRequestHeader(name, value)
    xhr.responseType = 'blob'
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded, e.total) }
    const onAbort = () => xhr.abort()
    init.signal.addEventListener('abort', onAbort, { once: true })
    const done = () => init.signal.removeEventListener('abort', onAbort)
    xhr.onload = () => {
      done()
      const headers = new Headers()
      for (const line of xhr.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
        const colon = line.indexOf(':')
        if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim())
      }
      resolve(new Response(xhr.status === 204 ? null : xhr.response as Blob, { status: xhr.status, statusText: xhr.statusText, headers }))
    }
    xhr.onerror = () => { done(); reject(new TypeError('Failed to fetch')) }
    xhr.ontimeout = xhr.onerror
    xhr.onabort = () => { done(); reject(init.signal.reason ?? new DOMException('The operation was aborted.', 'AbortError')) }
    if (init.signal.aborted) { xhr.abort(); return }
    xhr.send(init.body)
  })
}

/** The file name of a Content-Disposition header (RFC 6266): `filename*` (RFC 5987) first, then `filename`. */
export function fileNameOf(header: string | null): string | null {
  if (!header) return null
  const extended = /filename\*\s*=\s*([\w!#$&+.^`|~-]+)'[^']*'([^;]+)/i.exec(header)
  if (extended) {
    try {
      return baseName(decodeURIComponent(extended[2]!.trim()))
    } catch {
      // malformed percent-encoding: fall back to the plain name
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i.exec(header)
  if (!plain) return null
  return baseName(plain[1] !== undefined ? plain[1].replace(/\\(.)/g, '$1') : plain[2]!)
}

/** Only a base name: a file name from the network never chooses a folder. */
const baseName = (name: string) => name.split(/[\\/]/).pop()?.trim() || null

/** A UUID v4 from getRandomValues: `crypto.randomUUID` is missing in browsers off secure contexts (plain http). */
export function uuid(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
