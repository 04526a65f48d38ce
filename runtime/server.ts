import { serve } from '@hono/node-server'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { loadConfig, type Config } from '../shared/config.ts'
import { createDeviceLogger } from './log.ts'
import { logDirOf } from './device.ts'
import { RESTART_EXIT_CODE } from '../shared/aihost/types.ts'
import type { Services } from '../shared/handler.ts'
import { createServices } from './services.ts'
import { RouteTable } from './http/route-table.ts'
import { InFlight } from './http/inflight.ts'
import { createApp } from './http/app.ts'
import { answerClientErrors, answerUnmetExpectations } from './http/client-error.ts'
import { InputValidator } from './http/validate.ts'
import { functionsDistDir } from './paths.ts'
import { TUS_ROUTE } from './uploads/tus.ts'
import { announceReady, supervisorLost } from './supervisor/readiness.ts'
import { runPendingFactoryReset } from './backup/factory-reset.ts'
import { applyPendingRestore } from './backup/apply.ts'
import { httpAdvertiser } from './events/advertise.ts'
import { monotonicNow } from '../shared/clock.ts'

/** What the components' stops (streams, recording, sidecar, database) may take after the in-flight grace. */
const COMPONENTS_STOP_MS = 20_000

export interface RunningDevice {
  port: number
  /** Port of the event WebSocket listener. */
  wsPort: number
  services: Services
  stop(reason?: string): Promise<void>
  /** How long `stop` may take: the in-flight grace plus the components' own stops. */
  stopDeadlineMs: number
  /** Resolves with the reason when a handler asked for a restart (software upgrade). */
  restartRequested: Promise<string>
}

/** Starts the device: services, route table (hot-reloaded), HTTP server. */
export async function startDevice(config: Config = loadConfig()): Promise<RunningDevice> {
  // A confirmed factory reset and a staged restore are carried out before anything reads DATA_DIR (docs/system.md "Backup, restore and factory reset").
  const reset = await runPendingFactoryReset(config)
  const advertisement = httpAdvertiser(config)
  const { log, flush, health } = await createDeviceLogger({ level: config.logLevel, logDir: logDirOf(config.dataPath), maxBytes: config.logFileMaxBytes, count: config.logFileCount })
  await applyPendingRestore(config, log.child({ area: 'backup' }))
  const table = new RouteTable(config.functionsDir ? path.resolve(config.functionsDir) : functionsDistDir, log)
  await table.load()
  // One validator for every transport: HTTP and MQTT requests (spec 5.6).
  const validator = new InputValidator()
  // ViewRoutes lists exactly what is mounted: the route table and the tus endpoint createApp mounts beside it.
  const runtime = await createServices(config, log, { routes: () => [...table.routes(), TUS_ROUTE], router: { lookup: (p) => table.lookup(p), validator }, logFileHealth: health })
  await runtime.start()
  table.watch()

  const inflight = new InFlight()
  const app = createApp(runtime.handlerServices, table, inflight, { uploads: runtime.uploads, metrics: runtime.metrics, validator })
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () => resolve(s))
  })
  answerClientErrors(server)
  answerUnmetExpectations(server)
  // node's 5 s closed idle connections under clients busy a little longer between two requests:
  // the request they then sent met a closing socket and got no answer (docs/architecture.md).
  if ('keepAliveTimeout' in server) server.keepAliveTimeout = config.httpKeepAliveTimeoutMs
  const port = (server.address() as AddressInfo).port
  log.info({ port, host: config.host, version: runtime.services.process.softwareVersion, routes: table.routes().length }, 'listening')
  runtime.advertiseHttp(advertisement(port))
  const { process: proc, events } = runtime.services
  await events.emit('device.started', { softwareVersion: proc.softwareVersion, buildHash: proc.buildHash, startedAt: proc.startedAt })
  if (reset) await events.emit('device.factoryReset', { requestedBy: reset.requestedBy, requestedAt: reset.requestedAt })

  let stopping: Promise<void> | null = null
  const stop = (reason = 'stop') => (stopping ??= (async () => {
    log.info({ inFlight: inflight.size }, 'stopping')
    await events.emit('device.stopping', { reason, uptimeMs: Date.now() - proc.startedAt }).catch((error) => log.error({ err: error }, 'device.stopping event not written'))
    // Stop accepting; finish what is in flight; let keep-alive connections go once their
    // responses are written (a connection becomes idle only after its response is sent).
    let closed = false
    const serverClosed = new Promise<void>((resolve) => server.close(() => { closed = true; resolve() }))
    const deadline = monotonicNow() + config.shutdownGraceMs
    const grace = new Promise<void>((resolve) => setTimeout(resolve, config.shutdownGraceMs).unref())
    await Promise.race([inflight.drained(), grace])
    while (!closed && monotonicNow() < deadline) {
      if ('closeIdleConnections' in server) server.closeIdleConnections()
      await Promise.race([serverClosed, new Promise((resolve) => setTimeout(resolve, 25))])
    }
    if (!closed && 'closeAllConnections' in server) server.closeAllConnections()
    await table.close()
    await runtime.close()
    log.info('stopped')
    flush()
  })())
  const wsPort = (await events.settings.status()).websocket.port
  const restartRequested = new Promise<string>((resolve) => runtime.deviceHost.onRestart(resolve))
  return { port, wsPort, services: runtime.services, stop, stopDeadlineMs: config.shutdownGraceMs + COMPONENTS_STOP_MS, restartRequested }
}

let stopWatchdog: NodeJS.Timeout | undefined
/**
 * A stop that outlives its deadline (a component that never finishes stopping) must not leave
 * a half-stopped device behind: the process exits, and the supervisor or systemd starts it again.
 */
function exitIfStopHangs(deadlineMs: number): void {
  stopWatchdog ??= setTimeout(() => {
    process.stderr.write(`${JSON.stringify({ level: 50, time: Date.now(), pid: process.pid, deadlineMs, msg: 'stop did not finish in time; exiting' })}\n`)
    process.exit(1)
  }, deadlineMs).unref()
}

const isMain = import.meta.url === `file://${process.argv[1]}`
if (isMain) {
  // Watched before the start: the supervisor may die while the device is still starting.
  const supervisorGone = supervisorLost()
  startDevice().then((device) => {
    const stopAndExit = (reason: string, code: number) => {
      exitIfStopHangs(device.stopDeadlineMs)
      return device.stop(reason).then(() => process.exit(code), () => process.exit(1))
    }
    const shutdown = (signal: string) => stopAndExit(signal, 0)
    // `on`, not `once`: a stop of the whole process group delivers SIGTERM twice (directly and
    // forwarded by the supervisor); the second must not fall back to the default action, which
    // kills the requests in flight. `stop` is idempotent.
    process.on('SIGTERM', () => shutdown('SIGTERM'))
    process.on('SIGINT', () => shutdown('SIGINT'))
    // The device must not go on serving unsupervised.
    void supervisorGone.then(() => shutdown('supervisor gone'))
    // A restart request (upgrade) ends the process with the code the supervisor understands.
    void device.restartRequested.then((reason) => stopAndExit(`restart: ${reason}`, RESTART_EXIT_CODE))
    // Ready only once it also stops gracefully: a supervisor may answer the message with SIGTERM
    // at once (the default action would kill the device mid-request, exit code null).
    announceReady(device.port, device.services.process.softwareVersion)
  }, (error) => {
    console.error(error)
    process.exit(1)
  })
}
