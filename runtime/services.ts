import { mkdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import type { Config } from '../shared/config.ts'
import type { Clock, Logger, MountedRoute, Services } from '../shared/handler.ts'
import type { LogFileHealth } from '../shared/aihost/types.ts'
import { embeddedTuning, migrateDb, openDb, type Db } from './db/client.ts'
import { AccountStore, ensureDefaultAccount } from './auth/accounts.ts'
import { scryptCost } from '../shared/auth/password.ts'
import { migrationsDir, projectRoot, distDir } from './paths.ts'
import { RuntimeDeviceHost } from './device.ts'
import { registerPresetModels } from './models/presets.ts'
import { ModelStore } from './models/service.ts'
import { wireInference } from './aihost/wire-inference.ts'
import { reportUpgradeOutcomes } from './aihost/upgrade-report.ts'
import { DeviceUpgrade } from './upgrade/service.ts'
import { deviceBootId } from './boot-id.ts'
import { defaultManifestDir } from '../models/load-manifests.ts'
import { AlgorithmRegistryService } from './algorithms/registry.ts'
import { createEventSystem, type RequestRouter } from './events/index.ts'
import type { HttpAdvertisement } from './events/advertise.ts'
import { emitSidecarRestarts } from './events/producers.ts'
import { createInference } from './inference/start.ts'
import { restoreTasks } from './tasks/restore.ts'
import { TaskService } from './tasks/service.ts'
import { CameraService } from './cameras/service.ts'
import { StreamTaskService } from './streams/service.ts'
import { streamObservers } from './streams/observers/index.ts'
import { GalleryService } from './galleries/service.ts'
import { UploadManager } from './uploads/service.ts'
import { removeOrphanSpoolFiles, spoolDirOf } from './uploads/spool.ts'
import { SessionCache } from './auth/session-cache.ts'
import { RuntimeLoginThrottle } from './auth/login-throttle.ts'
import { removeLeftoverProducedFiles, scratchDirOf } from '../shared/http/produced-file.ts'
import { DeviceMetrics } from './metrics/index.ts'
import { HostNetworkService } from './network/service.ts'
import { AudioFilesAndColumns } from './audio/service.ts'
import { LogLevels } from './system/log-levels.ts'
import { HostTimeService } from './system/time-service.ts'
import { StoredImageQuality } from './system/image-quality.ts'
import { StoredLogo } from './system/logo.ts'
import { DebugSettingsService } from './system/debug.ts'
import { logDirOf } from './device.ts'
import { RuntimeBackupService } from './backup/service.ts'
import { ScheduleService } from './schedules/service.ts'
import { scheduleClock } from './schedules/clock.ts'
import { AlarmPolicyService } from './alarms/service.ts'
import { AlarmPictures } from './alarms/pictures.ts'
import { AlarmActions } from './alarms/actions.ts'
import { AlarmRaiser } from './alarms/raiser.ts'
import { Snapshots } from './streams/snapshots.ts'
import { StreamTokens } from './auth/stream-tokens.ts'
import { RecordingManager } from './recording/service.ts'
import { LiveViewService } from './live/service.ts'
import { addressGuard } from './tasks/address-guard.ts'
import { descriptorModelOf } from '../models/descriptor-model.ts'

/** A long-lived part of the device with a start and a stop (sweepers, sidecar, event channels). */
export interface Component {
  name: string
  start?(): Promise<void> | void
  stop?(): Promise<void> | void
}

export interface RuntimeServices {
  /** Every part, and the database the runtime's own parts (and tests) use. */
  services: Services & { db: Db }
  /** What handlers get in `ctx`: the same parts, without the database (docs/architecture.md "The handler contract"). */
  handlerServices: Services
  /** The concrete `ctx.device`, for the server to attach its restart procedure. */
  deviceHost: RuntimeDeviceHost
  /** The upload service itself (the runtime mounts the native tus endpoint on it). */
  uploads: UploadManager
  /** The metrics registry itself (the runtime's HTTP middleware records into it). */
  metrics: DeviceMetrics
  /** Publishes the HTTP address in the MQTT registration once the server listens (docs/deployment.md "Several devices"). */
  advertiseHttp(address: HttpAdvertisement): void
  components: Component[]
  /** Starts every component in order. */
  start(): Promise<void>
  /** Stops components in reverse order, then closes the database. */
  close(): Promise<void>
}

export interface ServiceOptions {
  routes?: () => MountedRoute[]
  clock?: Clock
  /** Route table and validator shared with HTTP, for MQTT requests (spec 5.6). */
  router?: RequestRouter
  /** The log file's health (runtime/log.ts), for QueryDeviceStatus. */
  logFileHealth?: () => LogFileHealth
}

const readJson = (file: string) => {
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return {}
  }
}

/**
 * Builds everything handlers reach through `ctx`, in three declared phases
 * (docs/architecture.md "Start-up phases"): build (each part from the parts built before it),
 * wire (the references that go both ways, in one block), then one start order, stopped in reverse.
 */
export async function createServices(config: Config, log: Logger, options: ServiceOptions = {}): Promise<RuntimeServices> {
  const passwordCost = scryptCost(config.passwordScrypt, config.passwordScryptAllowWeak) // a PASSWORD_SCRYPT out of range stops the start
  addressGuard(config.imageUrlBlockedNetworks) // so does an IMAGE_URL_BLOCKED_NETWORKS that is not a list of CIDRs
  mkdirSync(config.dataPath, { recursive: true })
  const clock = options.clock ?? { now: () => Date.now(), monotonic: () => performance.now() }
  // WAL: a commit appends to the log instead of rewriting pages (upload chunks commit their
  // manifest once per chunk); DB_SYNCHRONOUS chooses what a power cut may lose.
  const database = openDb(config.databaseUrl, config.libsqlAuthToken || undefined, { connectionSetup: embeddedTuning(config.dbSynchronous) })
  await migrateDb(database.db, migrationsDir)
  await ensureDefaultAccount(database.db, config.initialAdminPassword, config.initialPasswordChangeRequired, clock.now(), passwordCost)
  const now = () => clock.now()
  const processInfo: Services['process'] = {
    softwareVersion: String(readJson(path.join(projectRoot, 'package.json')).version ?? '0.0.0'),
    buildHash: String(readJson(path.join(distDir, 'build-info.json')).hash ?? 'unbuilt'),
    startedAt: clock.now(),
    bootId: deviceBootId(process.env),
  }

  // ---- Phase 1: build. Each part is made from parts made before it; nothing runs yet. ----
  // Log levels (spec 4.10 System "debug"): made before any area's logger, so it sees every one.
  const logLevels = new LogLevels(log)
  // Metrics (docs/metrics.md "Metrics"): one registry for this runtime, handed to every area that records.
  const metrics = new DeviceMetrics()
  // Sign-in sessions: mtk → identity, cached briefly; revocations through it apply at once.
  const sessions = new SessionCache(database.db, clock, {
    idleTimeoutMs: config.sessionIdleTimeoutMs, ttlMs: config.sessionCacheTtlMs, maxEntries: config.sessionCacheMaxEntries,
  })
  const deviceHost = new RuntimeDeviceHost(config.dataPath, log, options.logFileHealth)
  // The event channels serve requests with the `ctx` this function returns (read once they run).
  const eventSystem = createEventSystem({ db: database.db, client: database.client, config, clock, log, services: () => services, router: options.router ?? null, metrics })
  // The sign-in throttle: counts per account and client, blocks per client (docs/sign-in-and-errors.md "Sign-in and sessions").
  const loginThrottle = new RuntimeLoginThrottle({
    db: database.db, clock, events: eventSystem.events, log: log.child({ area: 'login' }),
    policy: { maxFailures: config.loginMaxFailures, blockMs: config.loginLockMs, maxBlockMs: config.loginMaxBlockMs, accountDelayMaxMs: config.loginAccountDelayMaxMs },
  })
  // Accounts (spec 4.1, 5.5): password checks run under the throttle; a password change revokes the account's sessions.
  const accounts = new AccountStore({ db: database.db, sessions, events: eventSystem.events })
  // Inference: the supervised sidecar, the algorithm registry (spec 4.10 Algorithm) that defines
  // every algorithm in it, and the created tasks loaded into it once it runs.
  const manifestDir = config.modelsManifestDir ? path.resolve(config.modelsManifestDir) : defaultManifestDir(projectRoot)
  const inference = createInference({
    config, projectRoot, entry: path.join(distDir, 'runtime', 'sidecar.mjs'), log: log.child({ component: 'inference' }), algorithms: [], metrics: metrics.inference,
  })
  const algorithmRegistry = await AlgorithmRegistryService.open({
    db: database.db, projectRoot, dataPath: config.dataPath, manifestDir, precision: config.modelPrecision === 'fp32' ? 'fp32' : 'manifest', clock, log: log.child({ area: 'algorithms' }),
    sidecar: inference.inference,
    limits: { maxEntries: config.algorithmPackageMaxEntries, maxExpandedBytes: config.algorithmPackageMaxExpandedBytes },
  })
  // Managed models (spec 4.10-4.11): the `models` table and the files under <DATA_DIR>/models; uploads are opened in the sidecar first.
  const models = new ModelStore({ db: database.db, dataPath: config.dataPath, clock, inference: inference.inference, algorithms: algorithmRegistry })
  // Upload sessions: manifests in this database, bytes under <DATA_DIR>/uploads; its sweeper runs on a timer.
  const uploads = new UploadManager({ db: database.db, config, clock, log: log.child({ area: 'uploads' }), events: eventSystem.events, metrics: metrics.uploads })
  // Image-analysis tasks (spec 3.2): their lifecycle, locks and activity.
  const tasks = new TaskService({ db: database.db, config, clock, log: log.child({ area: 'tasks' }), inference: inference.inference, uploads, algorithms: algorithmRegistry })
  // Network (spec 4.10): reads from the operating system, probes, and changes guarded by
  // confirm-or-rollback; a change pending before a restart rolls back at its own deadline.
  const network = new HostNetworkService({
    db: database.db, now, events: eventSystem.events, log: log.child({ area: 'network' }),
    namespace: config.networkNamespace, backend: config.networkBackend, confirmTimeoutMs: config.networkConfirmTimeoutMs,
  })
  // System settings (spec 4.10 System): time, image quality (read by every JPEG encoder), logo, debug.
  const time = new HostTimeService({ db: database.db, now, log: log.child({ area: 'time' }), service: config.timeService })
  const imageQuality = new StoredImageQuality({ db: database.db, now, log: log.child({ area: 'image-quality' }) })
  const logo = new StoredLogo({ db: database.db, dataPath: config.dataPath, now, log: log.child({ area: 'logo' }), uploads, maxBytes: config.logoMaxBytes })
  const debug = new DebugSettingsService({ db: database.db, now, log: log.child({ area: 'debug' }), levels: logLevels, logDir: logDirOf(config.dataPath) })
  // Cameras (spec 4.10 Camera): one reader (an ffmpeg child) per camera; stopped before the database closes.
  const cameras = new CameraService({ db: database.db, config, clock, log: log.child({ area: 'cameras' }), events: eventSystem.events, uploads, imageQuality })
  // Audio (spec 4.10 Audio): files normalized with ffmpeg, columns reached by HTTP push.
  const audio = new AudioFilesAndColumns({ db: database.db, config, clock, log: log.child({ area: 'audio' }), uploads })
  // Recording and live view (spec 4.10 System: recording, Live stream): the cameras' streams
  // copied without re-encoding; media URLs carry stream tokens. Stopped before cameras and tasks.
  const streamTokens = new StreamTokens(clock)
  const recording = new RecordingManager({ db: database.db, config, log: log.child({ area: 'recording' }), events: eventSystem.events, cameras, space: () => uploads.capacity() })
  // Face, body and things galleries (spec 4.10): vectors in libsql; the sidecar's recognizer nodes search them through the client.
  const galleries = new GalleryService({
    db: database.db, clock, log: log.child({ area: 'galleries' }), inference: inference.inference, uploads,
    algorithms: { face: config.galleryFaceAlgorithm, body: config.galleryBodyAlgorithm, things: config.galleryThingsAlgorithm },
    dataPath: config.dataPath, importLimits: { maxEntries: config.faceImportMaxEntries, maxExpandedBytes: config.faceImportMaxExpandedBytes },
    events: eventSystem.events,
    modelOf: (algorithmId) => { const loaded = algorithmRegistry.loaded(algorithmId); return loaded ? descriptorModelOf(loaded.manifest) : null },
  })
  // Schedules and alarm policies (spec 4.10 Schedule, Linkage / alarm policy): read by the stream
  // tasks on every frame; alarm actions still going out are abandoned after the tasks stop.
  const schedules = new ScheduleService({ db: database.db, now: scheduleClock(config.scheduleClockStart, clock, config.scheduleClockRate), time, log: log.child({ area: 'schedules' }) })
  const alarmPictures = new AlarmPictures(config.dataPath, config.fileServiceBaseUrl, config.eventRetentionMs)
  const alarmLog = log.child({ area: 'alarms' })
  const alarmActions = new AlarmActions({ log: alarmLog, events: eventSystem.events, publish: eventSystem.publish, audio })
  const recorder = () => recording
  const alarms = new AlarmPolicyService({ db: database.db, clock, log: alarmLog, schedules, cameras, audio: () => audio, recorder, pictures: alarmPictures })
  // Snapshots of object.entered and alarm.raised, at the camera's own size where it can (docs/cameras-and-stream-tasks.md "Snapshots").
  const snapshots = new Snapshots({ cameras, imageQuality, log: log.child({ area: 'snapshots' }), fullResolution: config.snapshotFullResolution })
  const raiser = new AlarmRaiser({ db: database.db, log: alarmLog, events: eventSystem.events, snapshots, pictures: alarmPictures, actions: alarmActions, recorder })
  // Stream tasks (spec 4.9 TaskCreate): resumed in the background once cameras and the sidecar run; stopped first.
  const streamLog = log.child({ area: 'streams' })
  const streams = new StreamTaskService({ db: database.db, clock, log: streamLog, inference: inference.inference, cameras, algorithms: algorithmRegistry,
    metrics: metrics.streamTaskMetrics(), schedules, detectSlots: config.streamDetectSlots, regionDetection: config.streamRegionDetection, snapshots,
    observers: streamObservers({
      config, events: eventSystem.events, snapshots, log: streamLog, algorithms: algorithmRegistry, faceAlgorithm: config.galleryFaceAlgorithm,
      describeFaces: (algorithmId, image) => inference.inference.describe(algorithmId, image),
      recognize: (request) => galleries.recognize(request),
      policies: alarms, schedules, raiser,
    }) })
  const live = new LiveViewService({ config, clock, log: log.child({ area: 'live' }), cameras, streams, streamTokens, events: eventSystem.events })
  // Backup, restore, factory reset (spec 4.10 System): a staged restore or reset is applied at the next start (runtime/server.ts).
  const backup = new RuntimeBackupService({ client: database.client, config, clock, log: log.child({ area: 'backup' }), events: eventSystem.events, uploads, device: deviceHost, softwareVersion: () => processInfo.softwareVersion })
  // Software upgrade (spec 4.11): staged here, installed by the supervisor at the next start.
  const upgrade = new DeviceUpgrade({ config, clock, log: log.child({ area: 'upgrade' }), uploads, events: eventSystem.events, device: deviceHost, softwareVersion: () => processInfo.softwareVersion })
  const services: Services = {
    config, clock, log, process: processInfo, routes: options.routes ?? (() => []), device: deviceHost,
    events: eventSystem.events, algorithms: algorithmRegistry, models, inference: inference.inference, tasks, galleries, uploads, sessions, accounts, loginThrottle, metrics,
    network, cameras, streams, audio, time, imageQuality, logo, debug, upgrade, backup, schedules, alarms, streamTokens, recording, live,
  }

  // ---- Phase 2: wire. Every reference that goes both ways, and every setter, is here. ----
  metrics.sources.eventBacklog = eventSystem.backlog
  metrics.sources.uploadSessions = () => uploads.sessionsByState()
  metrics.sources.streamTasks = () => streams.list()
  emitSidecarRestarts(inference.supervisor, eventSystem.events, log)
  // AI host: preset models = the models of the shipped pipelines (spec 4.11);
  // the inference report, pipelines and task activity behind the AI-host routes.
  await registerPresetModels(database.db, algorithmRegistry.shipped(), clock.now(), log)
  wireInference(deviceHost, inference, algorithmRegistry)
  inference.inference.setOverlayJpeg(() => imageQuality.current().overlay)
  inference.inference.setRecognizer(galleries.recognize)
  // Alarm policies check the stream tasks they name; the tasks read the policies on every frame.
  alarms.connectStreams(streams)

  // ---- Phase 3: start in this order; close() stops in reverse. ----
  const components: Component[] = [
    eventSystem.component,
    { name: 'tasks', start: async () => { await restoreTasks(database.db, inference.inference, log) } },
    {
      name: 'inference',
      // A sidecar that cannot start does not keep the device down: the supervisor retries with
      // backoff and detection answers SidecarUnavailable (retryable) meanwhile.
      start: () => inference.start().catch((error: Error) => log.error({ err: error.message }, 'inference sidecar failed to start; retrying')),
      stop: () => inference.close(),
    },
    // Exports are produced into DATA_DIR/tmp before they are served ranged; a stop mid-download leaves one behind.
    { name: 'export-scratch', start: async () => { await removeLeftoverProducedFiles(scratchDirOf(config.dataPath)) } },
    { name: 'upgrade-report', start: () => reportUpgradeOutcomes(config.dataPath, eventSystem.events, processInfo.softwareVersion, clock.now(), log) },
    {
      name: 'uploads',
      start: async () => {
        const removed = await removeOrphanSpoolFiles(spoolDirOf(config.dataPath))
        if (removed > 0) log.info({ removed }, 'removed upload spool files left by a previous run')
        await uploads.start()
      },
      stop: () => uploads.close(),
    },
    { name: 'network', start: () => network.start(), stop: () => network.stop() },
    { name: 'system-settings', start: async () => { await time.start(); await imageQuality.start(); await debug.start() } },
    { name: 'cameras', start: () => cameras.start(), stop: () => cameras.stop() },
    { name: 'schedules-and-alarms', start: async () => { await schedules.start(); await alarms.start() }, stop: () => alarmActions.stop() },
    {
      name: 'streams',
      start: () => { streams.start().catch((error: Error) => log.error({ err: error.message }, 'stream tasks failed to resume')) },
      stop: () => streams.stop(),
    },
    { name: 'recording', start: () => recording.start(), stop: () => recording.stop() },
    { name: 'live', start: () => live.start(), stop: () => live.stopAll() },
    { name: 'gallery-imports', start: () => galleries.imports.recover() },
    // Images described by an earlier descriptor model are described again in the background (docs/galleries.md "Descriptor model changes").
    { name: 'gallery-redescription', start: () => galleries.redescriber.start(), stop: () => galleries.redescriber.stop() },
    { name: 'backup', start: () => backup.start(), stop: () => backup.stop() },
  ]

  return {
    services: { ...services, db: database.db },
    handlerServices: services,
    deviceHost,
    uploads,
    metrics,
    advertiseHttp: eventSystem.advertiseHttp,
    components,
    async start() {
      for (const component of components) await component.start?.()
    },
    async close() {
      for (const component of [...components].reverse()) {
        try {
          await component.stop?.()
        } catch (error) {
          log.error({ err: error, component: component.name }, 'component failed to stop')
        }
      }
      database.close()
    },
  }
}
