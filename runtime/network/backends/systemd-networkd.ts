import path from 'node:path'
import type { AdapterConfig } from '../../../shared/network/schemas.ts'
import { captureFiles, restoreFiles, writeFileAtomically, type FileSnapshot } from './files.ts'
import type { BackendContext, BackendPlugin, NetworkBackend } from './types.ts'

/**
 * The device's own .network file for one adapter. Its `05-` prefix sorts before the usual
 * ones, and systemd-networkd applies the first file that matches an adapter, so it wins
 * while it exists; removing it on rollback gives the adapter back to the host's own file.
 */
export const networkdFile = (root: string, adapter: string) => path.join(root, 'etc/systemd/network', `05-cwai-${adapter}.network`)

export function networkdUnit(adapter: string, config: AdapterConfig): string {
  const lines = ['# Written by the device (network settings, confirm-or-rollback); replaced on the next change.', '[Match]', `Name=${adapter}`, '', '[Network]']
  if (config.mode === 'dhcp') lines.push('DHCP=ipv4')
  else {
    lines.push(`Address=${config.address}/${config.prefix}`)
    if (config.gateway) lines.push(`Gateway=${config.gateway}`)
  }
  for (const server of config.dns ?? []) lines.push(`DNS=${server}`)
  if (config.searchDomains?.length) lines.push(`Domains=${config.searchDomains.join(' ')}`)
  return lines.join('\n') + '\n'
}

class SystemdNetworkd implements NetworkBackend {
  readonly type = 'systemd-networkd' as const
  constructor(private readonly context: BackendContext) {}

  private async reload(adapter: string) {
    await this.context.host.run('networkctl', ['reload'])
    await this.context.host.run('networkctl', ['reconfigure', adapter])
  }

  capture(adapter: string) { return captureFiles([networkdFile(this.context.root, adapter)]) }

  async apply(adapter: string, config: AdapterConfig) {
    await writeFileAtomically(networkdFile(this.context.root, adapter), networkdUnit(adapter, config))
    await this.reload(adapter)
  }

  async restore(adapter: string, snapshot: unknown) {
    await restoreFiles(snapshot as FileSnapshot)
    await this.reload(adapter)
  }
}

export const systemdNetworkd: BackendPlugin = {
  async detect({ host }) {
    try {
      return (await host.run('systemctl', ['is-active', 'systemd-networkd'], 3000)).trim() === 'active'
    } catch {
      return false
    }
  },
  create: (context) => new SystemdNetworkd(context),
}
