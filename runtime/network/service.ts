import type { Db } from '../../shared/db/client.ts'
import { invalidParam } from '../../shared/errors/index.ts'
import type { NetworkTargets } from '../../shared/network/schemas.ts'
import type { NetworkService } from '../../shared/network/types.ts'
import { hostAccess, type HostAccess } from './host.ts'
import { measureQuality, runCheck } from './probes.ts'
import { readAdapters, readDns, readRoutes } from './read.ts'
import { NetworkStore } from './store.ts'

export interface NetworkServiceOptions {
  db: Db
  now: () => number
  /** Run every `ip` and backend command inside this network namespace (tests); '' = the host's. */
  namespace?: string
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

/** `ctx.network` (spec 4.10 Network): reads, quality and connectivity probes. */
export class HostNetworkService implements NetworkService {
  readonly host: HostAccess
  private readonly store: NetworkStore

  constructor(options: NetworkServiceOptions) {
    this.host = hostAccess(options.namespace ?? '')
    this.store = new NetworkStore(options.db, options.now)
  }

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
}
