import { ApiError } from '../../../shared/errors/index.ts'
import type { AdapterConfig } from '../../../shared/network/schemas.ts'
import type { BackendContext, BackendPlugin, NetworkBackend } from './types.ts'

/** The IPv4 settings of a NetworkManager connection the device changes and restores. */
export interface NmIpv4 {
  method: string
  addresses: string
  gateway: string
  dns: string
  dnsSearch: string
}
const FIELDS = ['ipv4.method', 'ipv4.addresses', 'ipv4.gateway', 'ipv4.dns', 'ipv4.dns-search'] as const

export const nmIpv4Of = (config: AdapterConfig): NmIpv4 => ({
  method: config.mode === 'dhcp' ? 'auto' : 'manual',
  addresses: config.mode === 'dhcp' ? '' : `${config.address}/${config.prefix}`,
  gateway: config.mode === 'dhcp' ? '' : config.gateway ?? '',
  dns: (config.dns ?? []).join(','),
  dnsSearch: (config.searchDomains ?? []).join(','),
})

/** `nmcli connection modify` arguments that set exactly these IPv4 settings (empty = cleared). */
export const nmcliModifyArgs = (connection: string, ipv4: NmIpv4) => [
  'connection', 'modify', connection,
  'ipv4.method', ipv4.method, 'ipv4.addresses', ipv4.addresses, 'ipv4.gateway', ipv4.gateway,
  'ipv4.dns', ipv4.dns, 'ipv4.dns-search', ipv4.dnsSearch,
]

/** NetworkManager through nmcli: the adapter's active connection is modified and re-activated. */
class NetworkManager implements NetworkBackend {
  readonly type = 'networkmanager' as const
  constructor(private readonly context: BackendContext) {}

  private nmcli(...args: string[]) { return this.context.host.run('nmcli', args, 30_000) }

  async capture(adapter: string) {
    const connection = (await this.nmcli('-g', 'GENERAL.CONNECTION', 'device', 'show', adapter)).trim()
    if (!connection)
      throw new ApiError('NotSupported', { msgText: `NetworkManager has no connection on ${adapter}: create one first.`, details: { backend: this.type, adapter } })
    const uuid = (await this.nmcli('-g', 'connection.uuid', 'connection', 'show', connection)).trim()
    // -g prints one value per line, in the order asked, with ':' and '\' escaped
    const values = (await this.nmcli('-g', FIELDS.join(','), 'connection', 'show', uuid)).split('\n').map((v) => v.replace(/\\(.)/g, '$1'))
    const ipv4: NmIpv4 = { method: values[0] ?? 'auto', addresses: values[1] ?? '', gateway: values[2] ?? '', dns: values[3] ?? '', dnsSearch: values[4] ?? '' }
    return { uuid, ipv4 }
  }

  private async set(uuid: string, ipv4: NmIpv4) {
    await this.nmcli(...nmcliModifyArgs(uuid, ipv4))
    await this.nmcli('connection', 'up', uuid)
  }

  async apply(adapter: string, config: AdapterConfig) {
    const { uuid } = await this.capture(adapter)
    await this.set(uuid, nmIpv4Of(config))
  }

  async restore(_adapter: string, snapshot: unknown) {
    const { uuid, ipv4 } = snapshot as { uuid: string; ipv4: NmIpv4 }
    await this.set(uuid, ipv4)
  }
}

export const networkManager: BackendPlugin = {
  async detect({ host }) {
    try {
      return (await host.run('nmcli', ['-t', '-f', 'RUNNING', 'general'], 3000)).trim() === 'running'
    } catch {
      return false
    }
  },
  create: (context) => new NetworkManager(context),
}
