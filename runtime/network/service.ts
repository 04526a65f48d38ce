import type { Db } from '../db/client.ts'
import { invalidParam } from '../../shared/errors/index.ts'
import type { EventsService } from '../../shared/events/types.ts'
import type { Logger } from '../../shared/handler.ts'
import { BACKEND_TYPES, type AdapterChange, type BackendType, type NetworkTargets } from '../../shared/network/schemas.ts'
import type { NetworkService } from '../../shared/network/types.ts'
import { ChangeGuard } from './changes.ts'
import { hostAccess, type HostAccess } from './host.ts'
import { measureQuality, runCheck } from './probes.ts'
import { readAdapters, readDns, readRoutes } from './read.ts'
import { NetworkStore } from './store.ts'

export interface NetworkServiceOptions {
  db: Db
  now: () => number
  events: EventsService
  log: Logger
  /** Run every `ip` and backend command inside this network namespace (tests); '' = the host's. */
  namespace?: string
  /** NETWORK_BACKEND: a backend type key, or '' to detect the host's. */
  backend?: string
  confirmTimeoutMs: number
  /** Root folder of the backends' configuration files; default `/` (tests: a temporary folder). */
  configRoot?: string
  /** Replaces the host access (tests of the backends and their detection). */
  host?: HostAccess
}

const TARGETS_KEY = 'network.targets'
const DEFAULT_TARGETS: NetworkTargets = { qualityTargets: [], checks: [], samples: 5, timeoutMs: 2000 }

function pick<T extends { name: string }>(items: T[], names: string[] | undefined): T[] {
  if (!names) return items
  const unknown = names.filter((name) => !items.some((item) => item.name === name))
  if (unknown.length) throw invalidParam('/names', `no stored target or check is named ${unknown.join(', ')}`, { unknown })
  return items.filter((item) => names.includes(item.name))
}

function uniqueNames(field: string, items: { name: string }[]) {
  const seen = new Set<string>()
  for (const item of items) {
    if (seen.has(item.name)) throw invalidParam(field, `the name ${item.name} is used twice`)
    seen.add(item.name)
  }
}

/** `ctx.network` (spec 4.10 Network): reads, quality and connectivity probes, guarded changes. */
export class HostNetworkService implements NetworkService {
  private readonly host: HostAccess
  private readonly store: NetworkStore
  private readonly changes: ChangeGuard

  constructor(options: NetworkServiceOptions) {
    const backend = options.backend ?? ''
    if (backend !== '' && !(BACKEND_TYPES as readonly string[]).includes(backend))
      throw new Error(`NETWORK_BACKEND: expected one of ${BACKEND_TYPES.join(', ')} or empty, got ${JSON.stringify(backend)}`)
    const namespace = options.namespace ?? ''
    this.host = options.host ?? hostAccess(namespace)
    this.store = new NetworkStore(options.db, options.now)
    const root = options.configRoot ?? '/'
    this.changes = new ChangeGuard({
      store: this.store,
      // `ip netns exec` shows /etc/netns/<ns>/resolv.conf as the namespace's /etc/resolv.conf
      context: { host: this.host, root, resolvConf: namespace ? `/etc/netns/${namespace}/resolv.conf` : `${root.replace(/\/$/, '')}/etc/resolv.conf` },
      backend: backend as BackendType | '',
      confirmTimeoutMs: options.confirmTimeoutMs,
      now: options.now,
      events: options.events,
      log: options.log,
    })
  }

  start() { return this.changes.start() }
  stop() { this.changes.stop() }

  adapters() { return readAdapters(this.host) }
  dns() { return readDns(this.host) }
  routes() { return readRoutes(this.host) }

  async targets(): Promise<NetworkTargets> {
    return { ...DEFAULT_TARGETS, ...await this.store.get<NetworkTargets>(TARGETS_KEY) }
  }

  async setTargets(targets: NetworkTargets): Promise<NetworkTargets> {
    uniqueNames('/qualityTargets', targets.qualityTargets)
    uniqueNames('/checks', targets.checks)
    await this.store.set(TARGETS_KEY, targets)
    return targets
  }

  async testQuality(names?: string[]) {
    const { qualityTargets, samples, timeoutMs } = await this.targets()
    return Promise.all(pick(qualityTargets, names).map((target) => measureQuality(target, samples, timeoutMs)))
  }

  async testConnectivity(names?: string[]) {
    const { checks, timeoutMs } = await this.targets()
    return Promise.all(pick(checks, names).map((check) => runCheck(check, timeoutMs)))
  }

  apply(change: AdapterChange, requestedBy: string | null) { return this.changes.apply(change, requestedBy) }
  confirm(changeId: string, through: string | null) { return this.changes.confirm(changeId, through) }
  revert(changeId: string) { return this.changes.revert(changeId) }
  changeStatus() { return this.changes.status() }
}
