import type { BackendType } from '../../../shared/network/schemas.ts'
import { ifupdown } from './ifupdown.ts'
import { iproute2Runtime } from './iproute2-runtime.ts'
import { networkManager } from './networkmanager.ts'
import { systemdNetworkd } from './systemd-networkd.ts'
import type { BackendContext, BackendPlugin } from './types.ts'

/** The backends by type key; auto-detection asks them in this order (the runtime one never answers). */
export const backendPlugins: Record<BackendType, BackendPlugin> = {
  networkmanager: networkManager,
  'systemd-networkd': systemdNetworkd,
  ifupdown,
  'iproute2-runtime': iproute2Runtime,
}

/** The backend the host manages its network with, or null when none is found. */
export async function detectBackend(context: BackendContext): Promise<BackendType | null> {
  for (const [type, plugin] of Object.entries(backendPlugins) as [BackendType, BackendPlugin][])
    if (await plugin.detect(context)) return type
  return null
}
