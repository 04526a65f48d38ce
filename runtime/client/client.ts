/**
 * A typed client of the device's HTTP interface (spec 4): the transport (transport.ts) and a
 * method per route the console and CLI use most. Request and answer types come from the
 * handlers (runtime/client/api.ts); any other route is `call(route, body)`, typed the same way.
 */
import { DeviceTransport, type CallOptions } from './transport.ts'
import { md5Hex } from './md5.ts'
import { ROUTES } from './routes.ts'
import type { ApiResponse } from './api.ts'
import type {
  AlgorithmPageQuery, AlgorithmUploadRequest, ChunkFields, DetectPicRequest, DownloadedFile, LayoutListQuery, LogQuery, ModelUploadRequest, Session, TaskCancelRequest, TaskCreateRequest, UploadSession, CameraAddRequest, CameraUpdateRequest, EventPageQuery, StreamTaskCreateRequest,
} from './types.ts'

export { DeviceTransport, fileNameOf, uuid, type ClientOptions, type CallOptions } from './transport.ts'

/** The answer (`resData`) of the route a method calls, as its handler returns it (api.ts). */
type R<K extends keyof typeof ROUTES> = ApiResponse<(typeof ROUTES)[K]>

export class DeviceClient extends DeviceTransport {
  // ── spec 4.1, 5 ──────────────────────────────────────────────────────────────────────
  /** Signs in with the MD5 digest of `password` (spec 4.1); keeps the mtk for later calls. */
  async login(account: string, password: string): Promise<Session> {
    return this.loginDigest(account, md5Hex(password))
  }

  /** Signs in with the password's MD5 digest as it travels (spec 5.8), for a caller that never held the password. */
  async loginDigest(account: string, pwdMd5: string): Promise<Session> {
    const session = await this.call(ROUTES.login, { account, pwd: pwdMd5 })
    this.mtk = session.mtk
    return session
  }

  /** spec 5.5, 5.7: revokes every session of the account, so the client signs in again afterwards. */
  async changePassword(oldPassword: string, newPassword: string): Promise<R<'changePassword'>> {
    const result = await this.call(ROUTES.changePassword, { oldPwd: md5Hex(oldPassword), newPwd: md5Hex(newPassword) })
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
  algorithmPage(query: AlgorithmPageQuery = {}): Promise<R<'algorithmPage'>> {
    return this.call(ROUTES.algorithmPage, {
      algorithmUsage: '2', algorithmName: '', supplier: '', algorithmId: '', algorithmCategory: '', pageNum: 1, pageSize: 100, ...query,
    })
  }

  // ── spec 4.10 (docs/algorithms.md "Algorithms and pipeline layouts") ─────────────────────────
  /** Pipeline layouts ordered by algorithmId: id, name, version, origin, node graph. */
  algorithmLayoutList(query: LayoutListQuery = {}): Promise<R<'algorithmLayoutList'>> {
    return this.call(ROUTES.algorithmLayoutList, { pageNum: 1, pageSize: 1000, ...query })
  }

  /** AlgorithmNotFound; AlgorithmInUse (details.taskIds) while created tasks use it. */
  algorithmDelete(algorithmId: string): Promise<R<'algorithmDelete'>> {
    return this.call(ROUTES.algorithmDelete, { algorithmId })
  }

  /** Installs the package of a completed upload of purpose `algorithm` (zip or tar.gz). */
  algorithmUpload(request: AlgorithmUploadRequest, options?: CallOptions): Promise<R<'algorithmUpload'>> {
    return this.call(ROUTES.algorithmUpload, request, options)
  }

  /** One algorithm as a zip package (manifest.json + its own files) that `algorithmUpload` installs again. */
  algorithmExport(algorithmId: string, options?: CallOptions): Promise<DownloadedFile> {
    return this.download(ROUTES.algorithmExport, { algorithmId }, options)
  }

  // ── spec 4.4-4.6 ─────────────────────────────────────────────────────────────────────
  uploadCapabilities(options?: CallOptions): Promise<R<'uploadCapabilities'>> {
    return this.call(ROUTES.uploadCapabilities, {}, options)
  }

  /** One chunk (spec 4.5). Fields go before the file part so that the device reads them first. */
  uploadChunk(fields: ChunkFields, chunk: Blob, fileName: string, options?: CallOptions): Promise<UploadSession> {
    const form = new FormData()
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, String(value))
    form.append('file', chunk, fileName)
    return this.call(ROUTES.uploadTemp, form, options)
  }

  cancelUpload(uploadId: string): Promise<R<'cancelUpload'>> {
    return this.call(ROUTES.cancelUpload, { uploadId })
  }

  // ── spec 4.3, 4.7, 4.8 ───────────────────────────────────────────────────────────────
  taskCreate(request: TaskCreateRequest, options: CallOptions = {}): Promise<R<'taskCreate'>> {
    return this.call(ROUTES.taskCreate, request, { timeoutMs: 120_000, ...options })
  }

  detectPic(request: DetectPicRequest, options: CallOptions = {}): Promise<R<'detectPic'>> {
    return this.call(ROUTES.detectPic, request, { timeoutMs: 60_000, ...options })
  }

  taskCancel(request: TaskCancelRequest): Promise<R<'taskCancel'>> {
    return this.call(ROUTES.taskCancel, request)
  }

  /** Created tasks (or cancelled ones), most recently changed first. */
  taskList(query: { state?: 'created' | 'cancelled'; pageNum?: number; pageSize?: number } = {}): Promise<R<'taskList'>> {
    return this.call(ROUTES.taskList, { pageSize: 200, ...query })
  }

  /** A task's status, pipeline and the stage times (ms) of its last detection, as the sidecar measured them. */
  taskInfo(taskId: string): Promise<R<'taskInfo'>> {
    return this.call(ROUTES.taskInfo, { taskId })
  }

  // ── device ───────────────────────────────────────────────────────────────────────────
  deviceStatus(): Promise<R<'deviceStatus'>> {
    return this.call(ROUTES.deviceStatus, {})
  }

  /**
   * spec 4.11: stages the package of a completed upload of purpose `upgrade` and restarts into it.
   * The answer is not the outcome: confirm by `softwareVersion` once the device is back.
   */
  upgrade(uploadId: string, options?: CallOptions): Promise<R<'upgrade'>> {
    return this.call(ROUTES.upgrade, { uploadId }, options)
  }

  memoryStatus(): Promise<R<'memoryStatus'>> {
    return this.call(ROUTES.memoryStatus, {})
  }

  modelList(query: { source?: 'preset' | 'user'; pageNo?: number; pageSize?: number } = {}): Promise<R<'modelList'>> {
    return this.call(ROUTES.modelList, { pageNo: 1, pageSize: 100, ...query })
  }

  /** Registers the model file of a completed upload of purpose `model` (docs/system.md "Models"). */
  modelUpload(request: ModelUploadRequest, options?: CallOptions): Promise<R<'modelUpload'>> {
    return this.call(ROUTES.modelUpload, request, options)
  }

  /** ModelInUse (details.taskIds) while created tasks run a pipeline naming the model. */
  modelDelete(modelId: string): Promise<R<'modelDelete'>> {
    return this.call(ROUTES.modelDelete, { modelId })
  }

  /** The model file; DefaultCantBeExport for presets and models uploaded as not exportable. */
  modelExport(modelId: string, options?: CallOptions): Promise<DownloadedFile> {
    return this.download(ROUTES.modelExport, { modelId }, options)
  }

  /** The device's log lines, newest first (docs/system.md "AI-host routes" QueryLogs). */
  queryLogs(query: LogQuery = {}): Promise<R<'queryLogs'>> {
    return this.call(ROUTES.queryLogs, query)
  }

  /** The Prometheus text exposition (docs/metrics.md "Metrics"): a GET, not the envelope, unless refused. */
  async metricsText(options: CallOptions = {}): Promise<string> {
    const { response, body } = await this.get(ROUTES.metrics, { ...options, timeoutMs: options.timeoutMs ?? 10_000 }, (r) => r.text())
    if (!response.ok) this.judge(ROUTES.metrics, response, body)
    return body
  }

  // ── spec 4.10 Camera (docs/cameras-and-stream-tasks.md "Cameras") ──────────────────────────────────────────────
  /** Connects to the source first (unless `verify: false`) and answers its error: CameraUnreachable, CameraAuthFailed, ... */
  cameraAdd(request: CameraAddRequest, options: CallOptions = {}): Promise<R<'cameraAdd'>> {
    return this.call(ROUTES.cameraAdd, request, { timeoutMs: 60_000, ...options })
  }

  cameraPage(query: { pageNum?: number; pageSize?: number; cameraName?: string } = {}): Promise<R<'cameraPage'>> {
    return this.call(ROUTES.cameraPage, { pageNum: 1, pageSize: 100, ...query })
  }

  /** Only the fields sent change; a changed source is connected first (password `""` removes it). */
  cameraUpdate(request: CameraUpdateRequest, options: CallOptions = {}): Promise<R<'cameraUpdate'>> {
    return this.call(ROUTES.cameraUpdate, request, { timeoutMs: 60_000, ...options })
  }

  /** CameraInUse (details.taskIds) while stream tasks read it, unless `force`. */
  cameraDelete(cameraId: string, force = false): Promise<R<'cameraDelete'>> {
    return this.call(ROUTES.cameraDelete, { cameraId, force })
  }

  cameraCapture(cameraId: string, options: CallOptions = {}): Promise<R<'cameraCapture'>> {
    return this.call(ROUTES.cameraCapture, { cameraId }, { timeoutMs: 60_000, ...options })
  }

  cameraUsbList(): Promise<R<'cameraUsbList'>> {
    return this.call(ROUTES.cameraUsbList, {})
  }

  // ── spec 4.9 stream tasks, 4.10 Task (docs/cameras-and-stream-tasks.md "Stream tasks") ────────────────────────
  /** spec 8: task creation may take up to 120 s (the pipeline loads). */
  streamTaskCreate(request: StreamTaskCreateRequest, options: CallOptions = {}): Promise<R<'streamTaskCreate'>> {
    return this.call(ROUTES.streamTaskCreate, request, { timeoutMs: 120_000, ...options })
  }

  streamTaskCancel(taskId: string): Promise<R<'streamTaskCancel'>> {
    return this.call(ROUTES.streamTaskCancel, { taskId })
  }

  streamTaskPage(query: { pageNum?: number; pageSize?: number; cameraId?: string } = {}): Promise<R<'streamTaskPage'>> {
    return this.call(ROUTES.streamTaskPage, { pageNum: 1, pageSize: 500, ...query })
  }

  /** Run details: the live figures, taskConfig, enabled, minDetectIntervalMs. */
  streamTaskDetail(taskId: string): Promise<R<'streamTaskDetail'>> {
    return this.call(ROUTES.streamTaskDetail, { taskId })
  }

  /** Task/update: changes what it names (taskConfig replaces the old one); the pipeline is reconfigured and the camera read again. */
  streamTaskUpdate(request: { taskId: string; taskConfig?: Record<string, unknown> }): Promise<R<'streamTaskUpdate'>> {
    return this.call(ROUTES.streamTaskUpdate, request, { timeoutMs: 120_000 })
  }

  streamTaskSwitch(taskId: string, enabled: boolean): Promise<R<'streamTaskSwitch'>> {
    return this.call(ROUTES.streamTaskSwitch, { taskId, enabled })
  }

  streamTaskBatch(action: 'start' | 'stop' | 'delete', taskIds: string[]): Promise<R<'streamTaskBatch'>> {
    return this.call(ROUTES.streamTaskBatch, { action, taskIds })
  }

  /** Stored events, newest first (docs/events.md "Event endpoints"). */
  eventPage(query: EventPageQuery = {}): Promise<R<'eventPage'>> {
    return this.call(ROUTES.eventPage, { pageNum: 1, pageSize: 50, ...query })
  }

  viewRoutes(): Promise<R<'viewRoutes'>> {
    return this.call(ROUTES.viewRoutes, {})
  }

  /** spec 4.11: type 0 → HTTP document, 1 → MQTT document. */
  interfaceDocUrl(type: 0 | 1): Promise<R<'interfaceDocUrl'>> {
    return this.call(ROUTES.interfaceDocUrl, { type })
  }
}
