import path from 'node:path'
import type { AdapterConfig } from '../../../shared/network/schemas.ts'
import { captureFiles, restoreFiles, writeFileAtomically, type FileSnapshot } from './files.ts'
import { rewriteIfupdown } from './ifupdown-file.ts'
import type { BackendContext, BackendPlugin, NetworkBackend } from './types.ts'

export const interfacesFile = (root: string) => path.join(root, 'etc/network/interfaces')

/** Debian's ifupdown: the adapter's stanza in /etc/network/interfaces, then ifdown/ifup. */
class Ifupdown implements NetworkBackend {
  readonly type = 'ifupdown' as const
  constructor(private readonly context: BackendContext) {}

  private async cycle(adapter: string) {
    // ifdown fails for an adapter ifupdown did not bring up; ifup below is what must work
    await this.context.host.run('ifdown', ['--force', adapter]).catch(() => undefined)
    await this.context.host.run('ifup', [adapter], 60_000)
  }

  capture() { return captureFiles([interfacesFile(this.context.root)]) }

  async apply(adapter: string, config: AdapterConfig) {
    const file = interfacesFile(this.context.root)
    const [current] = Object.values(await captureFiles([file]))
    await writeFileAtomically(file, rewriteIfupdown(current ?? '', adapter, config))
    await this.cycle(adapter)
  }

  async restore(adapter: string, snapshot: unknown) {
    await restoreFiles(snapshot as FileSnapshot)
    await this.cycle(adapter)
  }
}

export const ifupdown: BackendPlugin = {
  async detect({ host, root }) {
    const [file] = Object.values(await captureFiles([interfacesFile(root)]).catch(() => ({})))
    if (typeof file !== 'string') return false
    try {
      await host.run('ifup', ['--version'], 3000)
      return true
    } catch {
      return false
    }
  },
  create: (context) => new Ifupdown(context),
}
