import type { AdapterChange, AdapterConfig, BackendType, NetworkTargets } from './schemas.ts'

/**
 * The network area (spec 4.10 Network, `/gtw/cwai/network/`): what the operating system
 * reports about adapters, DNS and routes; quality and connectivity probes of stored targets;
 * adapter changes guarded by confirm-or-rollback. `ctx.network` (runtime/network/service.ts) owns it.
 */

export interface AdapterAddress {
  address: string
  prefix: number
  /** The kernel's `dynamic` flag: a leased address (DHCP, SLAAC) that expires. */
  dynamic: boolean
  scope: string
}

export interface Adapter {
  name: string
  /** Link-layer address; null for links without one. */
  mac: string | null
  /** Kernel link type: `ether`, `loopback`, `none`, … */
  type: string
  mtu: number
  /** Kernel operational state, lower case: `up`, `down`, `unknown`, `dormant`, … */
  state: string
  /** Whether the link has carrier (a cable or peer); null when the kernel does not say. */
  carrier: boolean | null
  /** Link speed in Mbit/s; null when unknown (link down, virtual links). */
  speedMbps: number | null
  ipv4: AdapterAddress[]
  ipv6: AdapterAddress[]
  /** Gateway of the IPv4 / IPv6 default route through this adapter. */
  gateway: string | null
  gateway6: string | null
  /** How IPv4 is configured: `dhcp`, `static`, or `unconfigured` (no IPv4 address and no DHCP). */
  mode: 'dhcp' | 'static' | 'unconfigured'
  /** What `mode` was read from: the configuration backend's file or lease, or the kernel's address flags. */
  modeSource: string
}

export interface Route {
  family: 'inet' | 'inet6'
  /** `default` or a prefix `a.b.c.d/n`. */
  destination: string
  gateway: string | null
  dev: string | null
  protocol: string | null
  scope: string | null
  metric: number | null
  preferredSource: string | null
}

export interface DnsInfo {
  servers: string[]
  searchDomains: string[]
  /** The file read: `/etc/resolv.conf`, or systemd-resolved's upstream list when the host uses its stub. */
  source: string
}

export interface RoutesInfo {
  /** The IPv4 / IPv6 default route with the lowest metric; null when there is none. */
  defaultRoute: Route | null
  defaultRoute6: Route | null
  routes: Route[]
}

export interface NetworkService {
  adapters(): Promise<Adapter[]>
  dns(): Promise<DnsInfo>
  routes(): Promise<RoutesInfo>
  /** The stored quality targets and connectivity checks (defaults: none). */
  targets(): Promise<NetworkTargets>
  setTargets(targets: NetworkTargets): Promise<NetworkTargets>
  /** Measures the stored quality targets (those named, or all); unknown names → InvalidParam. */
  testQuality(names?: string[]): Promise<QualityResult[]>
  /** Runs the stored connectivity checks (those named, or all); unknown names → InvalidParam. */
  testConnectivity(names?: string[]): Promise<CheckResult[]>
  /**
   * Validates and applies an adapter change through the host's backend; unless `confirm`ed
   * by `confirmBy`, the previous configuration comes back by itself (docs/network.md "Network").
   */
  apply(change: AdapterChange, requestedBy: string | null): Promise<PendingChange>
  /**
   * Keeps the pending change. `through` is the device's address the request arrived at: one
   * the change gives up is refused (NetworkConfirmFromOldAddress); null (no address, e.g. MQTT) is not checked.
   */
  confirm(changeId: string, through: string | null): Promise<ChangeOutcome>
  /** Restores the previous configuration now, without waiting for the timeout. */
  revert(changeId: string): Promise<ChangeOutcome>
  changeStatus(): Promise<ChangeStatus>
}

export interface QualityResult {
  name: string
  host: string
  port: number
  /** `tcp-connect`: round trips are timed TCP handshakes (ICMP echo would need raw sockets). */
  method: 'tcp-connect'
  sent: number
  received: number
  lossPercent: number
  /** null when no sample succeeded. */
  latencyMs: { min: number; avg: number; max: number } | null
  /** Mean absolute difference of consecutive round trips; null with fewer than two. */
  jitterMs: number | null
  /** Why the last failed sample failed; null when none failed. */
  lastError: string | null
}

export interface CheckResult {
  name: string
  type: 'tcp' | 'http' | 'dns'
  /** host:port, the URL or the host name checked. */
  target: string
  ok: boolean
  timeMs: number
  /** HTTP status, for `http`. */
  status?: number
  /** Resolved addresses, for `dns`. */
  addresses?: string[]
  error: string | null
}

/** A change waiting for its confirmation; persisted, so a restart keeps its deadline. */
export interface PendingChange {
  changeId: string
  adapter: string
  backend: BackendType
  config: AdapterConfig
  appliedAt: number
  /** ms since epoch: without a confirmation by then the previous configuration comes back. */
  confirmBy: number
  requestedBy: string | null
  /** The adapter's global IPv4 addresses before the change: a confirmation through one the change gives up is refused. */
  previousAddresses: string[]
}

export interface ChangeOutcome {
  changeId: string
  adapter: string
  backend: BackendType
  outcome: 'confirmed' | 'rolled-back'
  /** For `rolled-back`: `timeout`, `reverted` or `apply failed`. */
  reason: string | null
  at: number
}

export interface ChangeStatus {
  pending: PendingChange | null
  /** The last change that was confirmed or rolled back (null before the first). */
  last: ChangeOutcome | null
  /** The device's clock (ms since epoch), so a client counts down to `confirmBy` without trusting its own. */
  now: number
}
