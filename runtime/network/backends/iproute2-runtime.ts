import { ApiError } from '../../../shared/errors/index.ts'
import type { AdapterConfig } from '../../../shared/network/schemas.ts'
import { captureFiles, resolvConfText, restoreFiles, writeFileAtomically, type FileSnapshot } from './files.ts'
import type { BackendContext, BackendPlugin, NetworkBackend } from './types.ts'

interface Snapshot {
  addresses: { address: string; prefix: number }[]
  gateways: { gateway: string; metric: number | null }[]
  files: FileSnapshot
}

/**
 * Applies changes to the running kernel with `ip addr` / `ip route` and writes resolv.conf.
 * Nothing survives a reboot, and there is no DHCP client: chosen only explicitly
 * (NETWORK_BACKEND=iproute2-runtime), e.g. for a network namespace.
 */
class Iproute2Runtime implements NetworkBackend {
  readonly type = 'iproute2-runtime' as const
  constructor(private readonly context: BackendContext) {}

  private ip(...args: string[]) { return this.context.host.run('ip', args) }

  async capture(adapter: string): Promise<Snapshot> {
    const [links, routes] = await Promise.all([
      this.ip('-json', '-4', 'addr', 'show', 'dev', adapter),
      this.ip('-json', '-4', 'route', 'show', 'default', 'dev', adapter),
    ])
    const addrInfo = (JSON.parse(links || '[]') as { addr_info?: { local: string; prefixlen: number; scope?: string }[] }[])[0]?.addr_info ?? []
    return {
      addresses: addrInfo.filter((a) => a.scope !== 'host' && a.scope !== 'link').map((a) => ({ address: a.local, prefix: a.prefixlen })),
      gateways: (JSON.parse(routes || '[]') as { gateway?: string; metric?: number }[]).filter((r) => r.gateway).map((r) => ({ gateway: r.gateway!, metric: r.metric ?? null })),
      files: await captureFiles([this.context.resolvConf]),
    }
  }

  private async set(adapter: string, addresses: Snapshot['addresses'], gateways: Snapshot['gateways']) {
    await this.ip('-4', 'addr', 'flush', 'dev', adapter, 'scope', 'global')
    // flushing the addresses also drops the routes through them; any left are removed here
    await this.ip('-4', 'route', 'flush', 'default', 'dev', adapter)
    for (const a of addresses) await this.ip('addr', 'add', `${a.address}/${a.prefix}`, 'dev', adapter)
    for (const g of gateways)
      await this.ip('route', 'replace', 'default', 'via', g.gateway, 'dev', adapter, ...(g.metric === null ? [] : ['metric', String(g.metric)]))
  }

  async apply(adapter: string, config: AdapterConfig) {
    if (config.mode === 'dhcp')
      throw new ApiError('NotSupported', { msgText: 'The iproute2-runtime backend has no DHCP client: use a static address, or a persistent backend.', details: { backend: this.type, mode: 'dhcp' } })
    await this.set(adapter, [{ address: config.address!, prefix: config.prefix! }], config.gateway ? [{ gateway: config.gateway, metric: null }] : [])
    if (config.dns) await writeFileAtomically(this.context.resolvConf, resolvConfText(config.dns, config.searchDomains))
  }

  async restore(adapter: string, snapshot: unknown) {
    const s = snapshot as Snapshot
    await this.set(adapter, s.addresses, s.gateways)
    await restoreFiles(s.files)
  }
}

export const iproute2Runtime: BackendPlugin = {
  detect: async () => false,
  create: (context) => new Iproute2Runtime(context),
}
