import type { Static, TSchema } from '@sinclair/typebox'
import type { Config } from './config.ts'
import type { DeviceHost } from './aihost/types.ts'
import type { AlgorithmRegistry } from './algorithms/types.ts'
import type { EventsService } from './events/types.ts'
import type { InferenceService } from './inference/types.ts'
import type { UploadService } from './uploads/index.ts'
import type { SessionService } from './auth/session-service.ts'
import type { LoginThrottle } from './auth/login-throttle.ts'
import type { AccountsService } from './auth/accounts.ts'
import type { TasksService } from './tasks/types.ts'
import type { GalleriesService } from './galleries/types.ts'
import type { MetricsService } from './metrics/types.ts'
import type { NetworkService } from './network/types.ts'
import type { CamerasService } from './cameras/types.ts'
import type { StreamTasksService } from './streams/types.ts'
import type { SchedulesService } from './schedules/types.ts'
import type { AlarmPoliciesService } from './alarms/types.ts'
import type { AudioService } from './audio/types.ts'
import type { DebugService, ImageQualityService, LogoService, TimeService } from './system/types.ts'
import type { BackupService } from './backup/types.ts'
import type { StreamTokenService } from './auth/stream-tokens.ts'
import type { RecordingService } from './recording/types.ts'
import type { LiveService } from './live/types.ts'
import type { ModelsService } from './models/types.ts'
import type { UpgradeService } from './upgrade/types.ts'

/**
 * The handler contract (docs/architecture.md, "The handler contract").
 *
 * A handler file default-exports `defineHandler({...})`. The build turns each file into its
 * own bundle and records `routes`, `auth`, `body` and `methods` in the routes manifest; the
 * runtime mounts the bundle, validates `input`, injects `ctx`, wraps the returned value in
 * the envelope of spec 2.1 and turns a thrown catalogue error into `resCode: 0`.
 *
 * @example
 * export default defineHandler({
 *   routes: ['/v1/cwai/aihost/Probe'],
 *   auth: 'anonymous',
 *   body: 'none',
 *   summary: 'Liveness probe.',
 *   input: Type.Object({}),
 *   async handle() { return { alive: true } },
 * })
 */

/**
 * - `anonymous`: no `mtk` needed (only DoLogin and Probe, spec 5.2).
 * - `session`: a valid `mtk` whose account has no pending password change (spec 5.7).
 * - `session-any`: a valid `mtk`, even while a password change is pending (password change, sign-out).
 * - `scrape`: as `session`, or `Authorization: Bearer <METRICS_TOKEN>` when that setting is set
 *   (a Prometheus scraper holds no `mtk`); `ctx.identity` is null when the token was used.
 * - `stream`: as `session`, or a stream token (`?token=`) granted for this route and the `?id=`
 *   of the request (media URLs a `<video>` plays; shared/auth/stream-tokens.ts).
 */
export type AuthMode = 'anonymous' | 'session' | 'session-any' | 'scrape' | 'stream'

/**
 * - `json`: body parsed as JSON under the 1 MB limit (spec 8) and validated against `input`.
 * - `multipart`: body not parsed; `ctx.request` streams it under the 10 MB limit (see `bodyLimit`).
 * - `none`: body ignored; `input` is validated against `{}` plus query parameters.
 */
export type BodyKind = 'json' | 'multipart' | 'none'
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD'

export interface Identity {
  userId: string
  accountName: string
  /** null on trusted internal transports (MQTT, spec 5.6). */
  sessionId: string | null
  transport: 'http' | 'mqtt' | 'internal'
  passwordChangeRequired: boolean
}

export interface Clock {
  /** Wall-clock time, ms since epoch. */
  now(): number
  /**
   * Monotonic ms for durations that need not survive a restart (a wall-clock step does not move
   * it); `performance.now()` when absent.
   */
  monotonic?(): number
}

export interface Logger {
  trace(obj: object | string, msg?: string): void
  debug(obj: object | string, msg?: string): void
  info(obj: object | string, msg?: string): void
  warn(obj: object | string, msg?: string): void
  error(obj: object | string, msg?: string): void
  child(bindings: Record<string, unknown>): Logger
}

/**
 * Long-lived resources owned by the runtime; handlers reach them only through `ctx`. No
 * database: every piece of state is reached through its area's service (docs/architecture.md "Areas").
 */
export interface Services {
  config: Config
  clock: Clock
  log: Logger
  /** Facts about the running process (version, start time, boot identity of spec 4.11), for status endpoints. */
  process: { softwareVersion: string; startedAt: number; buildHash: string; bootId: string }
  /** The routes currently mounted (for ViewRoutes and the interface documents). */
  routes(): MountedRoute[]
  /** The device itself: inference report, logs, supervised restart (shared/aihost/types.ts). */
  device: DeviceHost
  /** Event outbox and channel settings (`ctx.events.emit(kind, payload, { tx })`, docs/events.md "Events"). */
  events: EventsService
  /** Algorithms and pipeline layouts: shipped, uploaded, saved (shared/algorithms/types.ts). */
  algorithms: AlgorithmRegistry
  /** Managed models, preset and user: list, register, configure, delete, export (spec 4.10-4.11; shared/models/types.ts). */
  models: ModelsService
  /** Client of the inference sidecar: pipelines, detection (shared/inference/types.ts). */
  inference: InferenceService
  /** Image-analysis tasks of spec 3.2: create, detect, cancel, status (shared/tasks/types.ts). */
  tasks: TasksService
  /** Face galleries, persons, search by image, recognition (spec 4.10; shared/galleries/types.ts). */
  galleries: GalleriesService
  /** Sign-in sessions: issue, resolve (cached), revoke (spec 5.2-5.5; shared/auth/session-service.ts). */
  sessions: SessionService
  /** Accounts and passwords: sign-in check, password change, account names (spec 4.1, 5.5; shared/auth/accounts.ts). */
  accounts: AccountsService
  /** The sign-in throttle every password check goes through (shared/auth/login-throttle.ts). */
  loginThrottle: LoginThrottle
  /** Chunked uploads and upload sessions (spec 2.5, 3.1, 4.4-4.6, 4.12); `claim` hands a complete upload to a consumer. */
  uploads: UploadService
  /** This runtime's Prometheus metrics, rendered for a scrape (shared/metrics/types.ts). */
  metrics: MetricsService
  /** The host's network: adapters, DNS, routes, quality and connectivity probes, changes with confirm-or-rollback (spec 4.10 Network; shared/network/types.ts). */
  network: NetworkService
  /** Cameras and their connection state (spec 4.10 Camera; shared/cameras/types.ts). */
  cameras: CamerasService
  /** Stream tasks: continuous analysis of a camera (spec 4.9 TaskCreate; shared/streams/types.ts). */
  streams: StreamTasksService
  /** Audio files and audio columns; `playOnColumn` is the action alarm policies take (spec 4.10 Audio; shared/audio/types.ts). */
  audio: AudioService
  /** The device's time zone (`ctx.time.timeZone()`, what schedules read), NTP servers, drift (spec 4.10 System; shared/system/types.ts). */
  time: TimeService
  /** JPEG quality and size cap of overlays, snapshots and captures, read at every encode (spec 4.10 System). */
  imageQuality: ImageQualityService
  /** The device's logo: upload (SVG sanitised), reset to the default (spec 4.10 System). */
  logo: LogoService
  /** Log level and per-area debug switches applied without restart; log files for download (spec 4.10 System). */
  debug: DebugService
  /** Software upgrade: staging an uploaded package, the upgrade record and journal (spec 4.11; shared/upgrade/types.ts). */
  upgrade: UpgradeService
  /** Backup, restore and factory reset (spec 4.10 System; shared/backup/types.ts). */
  backup: BackupService
  /** Weekly schedules in the device's time zone, read by stream tasks and alarm policies (spec 4.10 Schedule; shared/schedules/types.ts). */
  schedules: SchedulesService
  /** Alarm policies and alarm pictures (spec 4.10 Linkage / alarm policy; shared/alarms/types.ts). */
  alarms: AlarmPoliciesService
  /** Tokens in media URLs (`auth: 'stream'` routes), for players that cannot send mtk (shared/auth/stream-tokens.ts). */
  streamTokens: StreamTokenService
  /** Recording: settings, event and continuous clips, retention (spec 4.10 System: recording; shared/recording/types.ts). */
  recording: RecordingService
  /** Live view sessions (spec 4.10 Live stream; shared/live/types.ts). */
  live: LiveService
}

export interface Ctx extends Services {
  identity: Identity | null
  requestId: string
  /**
   * The client's network address: the socket's peer, or with HTTP_TRUST_PROXY the last
   * X-Forwarded-For entry; null on other transports.
   */
  clientAddress: string | null
  /**
   * The device's own address the request arrived at (the server's side of the socket, an
   * IPv4-mapped IPv6 address given as IPv4); null on other transports.
   */
  localAddress: string | null
  /** The HTTP request (streaming body for `multipart` handlers); null on non-HTTP transports. */
  request: Request | null
  /** Aborted when the client goes away. */
  signal: AbortSignal
}

export interface MountedRoute {
  path: string
  methods: (HttpMethod | 'OPTIONS')[]
  auth: AuthMode
  body: BodyKind | 'tus'
  bundle: string
  summary: string
  /**
   * Set on an endpoint mounted beside the route table that speaks its own protocol instead of
   * the envelope and owns every path under `path` (the tus upload endpoint).
   */
  protocol?: 'tus'
}

export interface HandlerDefinition<S extends TSchema = TSchema, R = unknown> {
  routes: string[]
  auth: AuthMode
  body: BodyKind
  /** Default ['POST'] (spec 4: all endpoints use POST unless stated). */
  methods?: HttpMethod[]
  /**
   * `chunk`: for upload-chunk handlers that stream and enforce maxChunkSize themselves. The HTTP
   * limit is then the regular multipart limit, raised to maxChunkSize + 1 MB of form overhead
   * when a deployment configures larger chunks, and never above the emergency backstop (spec 8).
   */
  bodyLimit?: 'default' | 'chunk'
  summary: string
  input: S
  /** Returns `resData` (wrapped in the envelope), or a `Response` sent as it is (files, streams). */
  handle(input: Static<S>, ctx: Ctx): Promise<R> | R
}

export function defineHandler<S extends TSchema, R>(definition: HandlerDefinition<S, R>): HandlerDefinition<S, R> {
  return definition
}
