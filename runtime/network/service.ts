import type { NetworkService } from '../../shared/network/types.ts'
import { hostAccess, type HostAccess } from './host.ts'
import { readAdapters, readDns, readRoutes } from './read.ts'

export interface NetworkServiceOptions {
  /** Run every `ip` and backend command inside this network namespace (tests); '' = the host's. */
  namespace?: string
  host?: HostAccess
}

/** `ctx.network`: reads of spec 4.10 Network. */
export class HostNetworkService implements NetworkService {
  readonly host: HostAccess

  constructor(options: NetworkServiceOptions = {}) {
    this.host = options.host ?? hostAccess(options.namespace ?? '')
  }

  adapters() { return readAdapters(this.host) }
  dns() { return readDns(this.host) }
  routes() { return readRoutes(this.host) }
}
