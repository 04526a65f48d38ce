import { deadline } from '../abort.ts'
import { DeviceError, NetworkError } from './errors.ts'
import { md5Hex } from './md5.ts'
import { ROUTES } from './routes.ts'
import type {
  AlgorithmPageQuery, AlgorithmRow, AlgorithmUploadRequest, ChunkFields, DetectPicRequest, DetectionResult, DeviceStatus, DownloadedFile, Envelope,
  LayoutListQuery, LayoutRow, ManagedAlgorithmRow, LogLine, LogQuery, ModelRow, ModelUploadRequest, Page, Session, TaskCancelRequest, TaskCreateRequest, TaskListRow,
  UploadCapabilities, UploadSession, UpgradeStaged,
  BatchOutcome, CameraAddRequest, CameraCapture, CameraUpdateRequest, CameraView, DeviceEvent, EventPageQuery, StreamTaskCreateRequest, StreamTaskStatus, UsbDevice,
} from './types.ts'

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
 * A typed client of the device's HTTP interface (spec 4). Every method resolves with
 * `resData`, or throws `DeviceError` (the device answered a failure) or `NetworkError`
 * (no answer). Works in Node 20 and in browsers (fetch, FormData, Blob).
 */
export class DeviceClient {
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

  private poller?: DeviceClient
  /**
   * This client for a page's periodic reads (refreshes, "follow"): every request carries
   * `x-poll: 1`, which the device's access log writes at debug level when it succeeds
   * (docs/console-and-cli.md "Logs"), so a console left open does not flood the log. The
   * session is this client's: signing in or out here applies to it too.
   */
  get polling(): DeviceClient {
    if (this.poller) return this.poller
    const poller = Object.create(this) as DeviceClient
    const plain = this.fetchImpl
    const marked: typeof fetch = (input, init) => plain(input, { ...init, headers: { ...(init?.headers as Record<string, string> | undefined), 'x-poll': '1' } })
    Object.defineProperty(poller, 'fetchImpl', { value: marked })
    this.poller = poller
    return poller
  }

  /** One request; the envelope decides success (spec 2.1). */
  async call<T>(route: string, body: unknown = {}, options: CallOptions = {}): Promise<T> {
    const { response, body: text } = await this.send(route, body, options, (r) => r.text())
    return this.judge<T>(route, response, text)
  }

  /**
   * A request whose success is a file (exports): the body as a Blob with its Content-Disposition
   * name. A failure is the envelope as for `call` (DeviceError).
   */
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
  private judge<T>(route: string, response: Response, text: string): T {
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

  // ── spec 4.1, 5 ──────────────────────────────────────────────────────────────────────
  /** Signs in with the MD5 digest of `password` (spec 4.1); keeps the mtk for later calls. */
  async login(account: string, password: string): Promise<Session> {
    return this.loginDigest(account, md5Hex(password))
  }

  /** Signs in with the password's MD5 digest as it travels (spec 5.8), for a caller that never held the password. */
  async loginDigest(account: string, pwdMd5: string): Promise<Session> {
    const session = await this.call<Session>(ROUTES.login, { account, pwd: pwdMd5 })
    this.mtk = session.mtk
    return session
  }

  /** spec 5.5, 5.7: revokes every session of the account, so the client signs in again afterwards. */
  async changePassword(oldPassword: string, newPassword: string): Promise<{ revokedSessions: number }> {
    const result = await this.call<{ revokedSessions: number }>(ROUTES.changePassword, { oldPwd: md5Hex(oldPassword), newPwd: md5Hex(newPassword) })
    this.mtk = null
    return result
  }

  async logout(): Promise<void> {
    try {
      await this.call(ROUTES.logout, {})
    } finally {
      this.mtk = null
    }
  }

  // ── spec 4.2 ─────────────────────────────────────────────────────────────────────────
  algorithmPage(query: AlgorithmPageQuery = {}): Promise<Page<AlgorithmRow>> {
    return this.call(ROUTES.algorithmPage, {
      algorithmUsage: '2', algorithmName: '', supplier: '', algorithmId: '', algorithmCategory: '', pageNum: 1, pageSize: 100, ...query,
    })
  }

  // ── spec 4.10 (docs/algorithms.md "Algorithms and pipeline layouts") ─────────────────────────
  /** Pipeline layouts ordered by algorithmId: id, name, version, origin, node graph. */
  algorithmLayoutList(query: LayoutListQuery = {}): Promise<Page<LayoutRow>> {
    return this.call(ROUTES.algorithmLayoutList, { pageNum: 1, pageSize: 1000, ...query })
  }

  /** AlgorithmNotFound; AlgorithmInUse (details.taskIds) while created tasks use it. */
  algorithmDelete(algorithmId: string): Promise<void> {
    return this.call(ROUTES.algorithmDelete, { algorithmId })
  }

  /** Installs the package of a completed upload of purpose `algorithm` (zip or tar.gz). */
  algorithmUpload(request: AlgorithmUploadRequest, options?: CallOptions): Promise<{ algorithms: ManagedAlgorithmRow[] }> {
    return this.call(ROUTES.algorithmUpload, request, options)
  }

  /** One algorithm as a zip package (manifest.json + its own files) that `algorithmUpload` installs again. */
  algorithmExport(algorithmId: string, options?: CallOptions): Promise<DownloadedFile> {
    return this.download(ROUTES.algorithmExport, { algorithmId }, options)
  }

  // ── spec 4.4-4.6 ─────────────────────────────────────────────────────────────────────
  uploadCapabilities(options?: CallOptions): Promise<UploadCapabilities> {
    return this.call(ROUTES.uploadCapabilities, {}, options)
  }

  /** One chunk (spec 4.5). Fields go before the file part so that the device reads them first. */
  uploadChunk(fields: ChunkFields, chunk: Blob, fileName: string, options?: CallOptions): Promise<UploadSession> {
    const form = new FormData()
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, String(value))
    form.append('file', chunk, fileName)
    return this.call(ROUTES.uploadTemp, form, options)
  }

  cancelUpload(uploadId: string): Promise<void> {
    return this.call(ROUTES.cancelUpload, { uploadId })
  }

  // ── spec 4.3, 4.7, 4.8 ───────────────────────────────────────────────────────────────
  taskCreate(request: TaskCreateRequest, options: CallOptions = {}): Promise<unknown> {
    return this.call(ROUTES.taskCreate, request, { timeoutMs: 120_000, ...options })
  }

  detectPic(request: DetectPicRequest, options: CallOptions = {}): Promise<DetectionResult> {
    return this.call(ROUTES.detectPic, request, { timeoutMs: 60_000, ...options })
  }

  taskCancel(request: TaskCancelRequest): Promise<unknown> {
    return this.call(ROUTES.taskCancel, request)
  }

  /** Created tasks (or cancelled ones), most recently changed first. */
  taskList(query: { state?: 'created' | 'cancelled'; pageNum?: number; pageSize?: number } = {}): Promise<Page<TaskListRow>> {
    return this.call(ROUTES.taskList, { pageSize: 200, ...query })
  }

  /** A task's status, pipeline and the stage times (ms) of its last detection, as the sidecar measured them. */
  taskInfo(taskId: string): Promise<TaskListRow & { lastTimings: Record<string, number> | null; [field: string]: unknown }> {
    return this.call(ROUTES.taskInfo, { taskId })
  }

  // ── device ───────────────────────────────────────────────────────────────────────────
  deviceStatus(): Promise<DeviceStatus> {
    return this.call(ROUTES.deviceStatus, {})
  }

  /**
   * spec 4.11: stages the package of a completed upload of purpose `upgrade` and restarts into it.
   * The answer is not the outcome: confirm by `softwareVersion` once the device is back.
   */
  upgrade(uploadId: string, options?: CallOptions): Promise<UpgradeStaged> {
    return this.call(ROUTES.upgrade, { uploadId }, options)
  }

  memoryStatus(): Promise<Record<string, unknown>> {
    return this.call(ROUTES.memoryStatus, {})
  }

  modelList(query: { source?: 'preset' | 'user'; pageNo?: number; pageSize?: number } = {}): Promise<Page<ModelRow>> {
    return this.call(ROUTES.modelList, { pageNo: 1, pageSize: 100, ...query })
  }

  /** Registers the model file of a completed upload of purpose `model` (docs/system.md "Models"). */
  modelUpload(request: ModelUploadRequest, options?: CallOptions): Promise<ModelRow> {
    return this.call(ROUTES.modelUpload, request, options)
  }

  /** ModelInUse (details.taskIds) while created tasks run a pipeline naming the model. */
  modelDelete(modelId: string): Promise<{ modelId: string; deleted: true }> {
    return this.call(ROUTES.modelDelete, { modelId })
  }

  /** The model file; DefaultCantBeExport for presets and models uploaded as not exportable. */
  modelExport(modelId: string, options?: CallOptions): Promise<DownloadedFile> {
    return this.download(ROUTES.modelExport, { modelId }, options)
  }

  /** The device's log lines, newest first (docs/system.md "AI-host routes" QueryLogs). */
  queryLogs(query: LogQuery = {}): Promise<Page<LogLine>> {
    return this.call(ROUTES.queryLogs, query)
  }

  /** The Prometheus text exposition (docs/metrics.md "Metrics"): a GET, not the envelope, unless refused. */
  async metricsText(options: CallOptions = {}): Promise<string> {
    const { response, body } = await this.get(ROUTES.metrics, { ...options, timeoutMs: options.timeoutMs ?? 10_000 }, (r) => r.text())
    if (!response.ok) this.judge(ROUTES.metrics, response, body)
    return body
  }

  /**
   * GETs a route or URL and reads the body; no answer → NetworkError. The mtk goes only to the
   * device's own origin: a URL elsewhere (a file service, spec 2.6) never receives the session.
   */
  private async get<B>(url: string, options: CallOptions, read: (response: Response) => Promise<B>): Promise<{ response: Response; body: B }> {
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

  viewRoutes(): Promise<Page<{ path: string; methods: string[]; authenticated: boolean; summary: string; protocol?: 'tus' }>> {
    return this.call(ROUTES.viewRoutes, {})
  }

  /** spec 4.11: type 0 → HTTP document, 1 → MQTT document. */
  interfaceDocUrl(type: 0 | 1): Promise<{ type: number; url: string; version: string }> {
    return this.call(ROUTES.interfaceDocUrl, { type })
  }

  // ── spec 4.10 Camera (docs/cameras-and-stream-tasks.md "Cameras") ──────────────────────────────────────────────
  /** Connects to the source first (unless `verify: false`) and answers its error: CameraUnreachable, CameraAuthFailed, ... */
  cameraAdd(request: CameraAddRequest, options: CallOptions = {}): Promise<{ cameraId: string }> {
    return this.call(ROUTES.cameraAdd, request, { timeoutMs: 60_000, ...options })
  }

  cameraPage(query: { pageNum?: number; pageSize?: number; cameraName?: string } = {}): Promise<Page<CameraView>> {
    return this.call(ROUTES.cameraPage, { pageNum: 1, pageSize: 100, ...query })
  }

  /** Only the fields sent change; a changed source is connected first (password `""` removes it). */
  cameraUpdate(request: CameraUpdateRequest, options: CallOptions = {}): Promise<void> {
    return this.call(ROUTES.cameraUpdate, request, { timeoutMs: 60_000, ...options })
  }

  /** CameraInUse (details.taskIds) while stream tasks read it, unless `force`. */
  cameraDelete(cameraId: string, force = false): Promise<void> {
    return this.call(ROUTES.cameraDelete, { cameraId, force })
  }

  cameraCapture(cameraId: string, options: CallOptions = {}): Promise<CameraCapture> {
    return this.call(ROUTES.cameraCapture, { cameraId }, { timeoutMs: 60_000, ...options })
  }

  cameraUsbList(): Promise<{ rows: UsbDevice[] }> {
    return this.call(ROUTES.cameraUsbList, {})
  }

  // ── spec 4.9 stream tasks, 4.10 Task (docs/cameras-and-stream-tasks.md "Stream tasks") ────────────────────────
  /** spec 8: task creation may take up to 120 s (the pipeline loads). */
  streamTaskCreate(request: StreamTaskCreateRequest, options: CallOptions = {}): Promise<{ taskId: string; reused: boolean }> {
    return this.call(ROUTES.streamTaskCreate, request, { timeoutMs: 120_000, ...options })
  }

  streamTaskCancel(taskId: string): Promise<void> {
    return this.call(ROUTES.streamTaskCancel, { taskId })
  }

  streamTaskPage(query: { pageNum?: number; pageSize?: number; cameraId?: string } = {}): Promise<Page<StreamTaskStatus>> {
    return this.call(ROUTES.streamTaskPage, { pageNum: 1, pageSize: 500, ...query })
  }

  /** Run details: the live figures, taskConfig, enabled, minDetectIntervalMs. */
  streamTaskDetail(taskId: string): Promise<StreamTaskStatus> {
    return this.call(ROUTES.streamTaskDetail, { taskId })
  }

  /** Task/update: changes what it names (taskConfig replaces the old one); the pipeline is reconfigured and the camera read again. */
  streamTaskUpdate(request: { taskId: string; taskConfig?: Record<string, unknown> }): Promise<StreamTaskStatus> {
    return this.call(ROUTES.streamTaskUpdate, request, { timeoutMs: 120_000 })
  }

  streamTaskSwitch(taskId: string, enabled: boolean): Promise<StreamTaskStatus> {
    return this.call(ROUTES.streamTaskSwitch, { taskId, enabled })
  }

  streamTaskBatch(action: 'start' | 'stop' | 'delete', taskIds: string[]): Promise<BatchOutcome> {
    return this.call(ROUTES.streamTaskBatch, { action, taskIds })
  }

  /** Stored events, newest first (docs/events.md "Event endpoints"). */
  eventPage(query: EventPageQuery = {}): Promise<Page<DeviceEvent>> {
    return this.call(ROUTES.eventPage, { pageNum: 1, pageSize: 50, ...query })
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
