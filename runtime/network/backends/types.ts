import type { AdapterConfig, BackendType } from '../../../shared/network/schemas.ts'
import type { HostAccess } from '../host.ts'

/** What a backend works with: the host's programs, and where its configuration files live. */
export interface BackendContext {
  host: HostAccess
  /** Root folder of the configuration files (`/`; a temporary folder in tests). */
  root: string
  /** The resolv.conf the runtime backend writes (a namespace's own under /etc/netns/<ns>/). */
  resolvConf: string
}

/**
 * A network configuration backend, picked by its type key (docs/network.md "Network"). `capture`
 * returns, as JSON, everything `restore` needs to bring the adapter's configuration back as
 * it is now; the confirm-or-rollback state machine (../changes.ts) persists it.
 */
export interface NetworkBackend {
  readonly type: BackendType
  capture(adapter: string): Promise<unknown>
  apply(adapter: string, config: AdapterConfig): Promise<void>
  restore(adapter: string, snapshot: unknown): Promise<void>
}

export interface BackendPlugin {
  /** Whether the host manages its network with it (auto-detection); the runtime backend never is. */
  detect(context: BackendContext): Promise<boolean>
  create(context: BackendContext): NetworkBackend
}
