import type { Adapter, AdapterAddress, DnsInfo, Route, RoutesInfo } from '../../shared/network/types.ts'
import { ifupdownMethods } from './backends/ifupdown-file.ts'
import type { HostAccess } from './host.ts'

/**
 * The read paths of the network area: the kernel's own interfaces (`ip -json` of iproute2,
 * /sys/class/net) rather than human-readable output, and the configuration backends' files
 * for whether an adapter is DHCP or static.
 */

interface IpAddrInfo {
  family: string
  local: string
  prefixlen: number
  scope?: string
  dynamic?: boolean
}
interface IpLink {
  ifindex: number
  ifname: string
  address?: string
  link_type?: string
  mtu?: number
  operstate?: string
  flags?: string[]
  addr_info?: IpAddrInfo[]
}
interface IpRoute {
  dst: string
  gateway?: string
  dev?: string
  protocol?: string
  scope?: string
  metric?: number
  prefsrc?: string
}

const json = async <T>(host: HostAccess, args: string[]): Promise<T> => JSON.parse((await host.run('ip', ['-json', ...args])) || '[]') as T

const address = (info: IpAddrInfo): AdapterAddress =>
  ({ address: info.local, prefix: info.prefixlen, dynamic: info.dynamic === true, scope: info.scope ?? 'global' })

const route = (family: Route['family'], r: IpRoute): Route => ({
  family,
  destination: r.dst,
  gateway: r.gateway ?? null,
  dev: r.dev ?? null,
  protocol: r.protocol ?? null,
  scope: r.scope ?? null,
  metric: r.metric ?? null,
  preferredSource: r.prefsrc ?? null,
})

const lowestMetric = (routes: Route[]) =>
  routes.filter((r) => r.destination === 'default').sort((a, b) => (a.metric ?? 0) - (b.metric ?? 0))[0] ?? null

export async function readRoutes(host: HostAccess): Promise<RoutesInfo> {
  const [v4, v6] = await Promise.all([json<IpRoute[]>(host, ['-4', 'route', 'show']), json<IpRoute[]>(host, ['-6', 'route', 'show'])])
  const routes = [...v4.map((r) => route('inet', r)), ...v6.map((r) => route('inet6', r))]
  return { defaultRoute: lowestMetric(routes.filter((r) => r.family === 'inet')), defaultRoute6: lowestMetric(routes.filter((r) => r.family === 'inet6')), routes }
}

const sysNumber = async (host: HostAccess, name: string, attribute: string) => {
  // Reading `speed` or `carrier` of a link that is down fails (EINVAL): unknown, not an error.
  const text = await host.readText(`/sys/class/net/${name}/${attribute}`)
  const value = text === null ? NaN : Number(text.trim())
  return Number.isFinite(value) ? value : null
}

/** NetworkManager's `ipv4.method` per device, when NetworkManager runs; empty otherwise. */
async function networkManagerMethods(host: HostAccess): Promise<Map<string, string>> {
  const methods = new Map<string, string>()
  let devices: string
  try {
    devices = await host.run('nmcli', ['-t', '-f', 'DEVICE,CONNECTION', 'device', 'status'], 3000)
  } catch {
    return methods
  }
  for (const line of devices.split('\n')) {
    const [device, connection] = line.split(/(?<!\\):/)
    if (!device || !connection || connection === '--') continue
    try {
      methods.set(device, (await host.run('nmcli', ['-g', 'ipv4.method', 'connection', 'show', connection.replace(/\\:/g, ':')], 3000)).trim())
    } catch { /* a connection that vanished meanwhile */ }
  }
  return methods
}

/**
 * A configurable adapter's global IPv4 addresses (those a change replaces; link and host
 * scope stay), or null when there is no such adapter or it is the loopback.
 */
export async function readAdapterIpv4(host: HostAccess, name: string): Promise<string[] | null> {
  let link: IpLink | undefined
  try {
    [link] = await json<IpLink[]>(host, ['addr', 'show', 'dev', name])
  } catch {
    return null // `ip` refuses an unknown device
  }
  if (!link || link.link_type === 'loopback') return null
  return (link.addr_info ?? []).filter((a) => a.family === 'inet' && (a.scope ?? 'global') === 'global').map((a) => a.local)
}

export async function readAdapters(host: HostAccess): Promise<Adapter[]> {
  const [links, routes, ifupdown, nm] = await Promise.all([
    json<IpLink[]>(host, ['addr', 'show']),
    readRoutes(host),
    host.readText('/etc/network/interfaces').then((text) => ifupdownMethods(text ?? '')),
    networkManagerMethods(host),
  ])
  const gatewayOf = (family: Route['family'], dev: string) =>
    lowestMetric(routes.routes.filter((r) => r.family === family && r.dev === dev))?.gateway ?? null
  return Promise.all(links.map(async (link): Promise<Adapter> => {
    const addresses = link.addr_info ?? []
    const ipv4 = addresses.filter((a) => a.family === 'inet').map(address)
    const ipv6 = addresses.filter((a) => a.family === 'inet6').map(address)
    const [speed, carrier, lease] = await Promise.all([
      sysNumber(host, link.ifname, 'speed'),
      sysNumber(host, link.ifname, 'carrier'),
      host.readText(`/run/systemd/netif/leases/${link.ifindex}`),
    ])
    let mode: Adapter['mode']
    let modeSource: string
    const nmMethod = nm.get(link.ifname)
    const ifupdownMethod = ifupdown.get(link.ifname)
    if (nmMethod === 'auto' || nmMethod === 'manual') [mode, modeSource] = [nmMethod === 'auto' ? 'dhcp' : 'static', 'networkmanager']
    else if (lease !== null) [mode, modeSource] = ['dhcp', 'systemd-networkd lease']
    else if (ifupdownMethod === 'dhcp' || ifupdownMethod === 'static') [mode, modeSource] = [ifupdownMethod, 'ifupdown']
    else [mode, modeSource] = [ipv4.some((a) => a.dynamic) ? 'dhcp' : ipv4.length ? 'static' : 'unconfigured', 'kernel address flags']
    return {
      name: link.ifname,
      mac: link.address && link.link_type !== 'none' ? link.address : null,
      type: link.link_type ?? 'unknown',
      mtu: link.mtu ?? 0,
      state: (link.operstate ?? 'unknown').toLowerCase(),
      carrier: carrier === null ? null : carrier === 1,
      speedMbps: speed !== null && speed > 0 ? speed : null,
      ipv4,
      ipv6,
      gateway: gatewayOf('inet', link.ifname),
      gateway6: gatewayOf('inet6', link.ifname),
      mode,
      modeSource,
    }
  }))
}

/** `nameserver`, `search` and `domain` lines of a resolv.conf. */
export function parseResolvConf(text: string): { servers: string[]; searchDomains: string[] } {
  const servers: string[] = []
  let searchDomains: string[] = []
  for (const raw of text.split('\n')) {
    const [keyword, ...values] = raw.replace(/[#;].*$/, '').trim().split(/\s+/)
    if (keyword === 'nameserver' && values[0]) servers.push(values[0])
    // the last search/domain line wins (resolv.conf(5))
    else if ((keyword === 'search' || keyword === 'domain') && values.length) searchDomains = values
  }
  return { servers, searchDomains }
}

const RESOLVED_STUB = '127.0.0.53'
const RESOLVED_UPSTREAM = '/run/systemd/resolve/resolv.conf'

export async function readDns(host: HostAccess): Promise<DnsInfo> {
  const text = (await host.readText('/etc/resolv.conf')) ?? ''
  const parsed = parseResolvConf(text)
  // systemd-resolved's stub answers locally; the servers it asks are in its own file.
  if (parsed.servers.length === 1 && parsed.servers[0] === RESOLVED_STUB) {
    const upstream = await host.readText(RESOLVED_UPSTREAM)
    if (upstream !== null) return { ...parseResolvConf(upstream), source: RESOLVED_UPSTREAM }
  }
  return { ...parsed, source: '/etc/resolv.conf' }
}
