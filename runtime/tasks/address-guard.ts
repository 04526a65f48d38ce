import dns, { type LookupAddress } from 'node:dns'
import { BlockList, isIP } from 'node:net'

/** Thrown (as a connection error) when a host resolves only to addresses the guard refuses. */
export class BlockedAddress extends Error {
  constructor(readonly host: string, readonly address: string) {
    super(`${host} resolves to ${address}, an address the device does not download from`)
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * The networks a client-given URL (imageUrl) may not reach: by default the device itself
 * (loopback, unspecified), link-local (cloud metadata at 169.254.169.254), multicast and
 * broadcast; private LANs, where cameras and file servers live, are reachable. The check is
 * made in the connection's own DNS lookup, so a name cannot resolve to an allowed address
 * for a check and to a refused one for the connection (DNS rebinding).
 */
export class AddressGuard {
  private readonly list = new BlockList()

  /** `networks`: comma-separated CIDRs, or `none` (IMAGE_URL_BLOCKED_NETWORKS); throws naming a bad one. */
  constructor(networks: string) {
    if (networks.trim() === 'none') return
    for (const cidr of networks.split(',').map((n) => n.trim()).filter(Boolean)) {
      const [address = '', prefix = ''] = cidr.split('/')
      const family = isIP(address)
      const bits = Number(prefix)
      if (family === 0 || !/^\d{1,3}$/.test(prefix) || bits > (family === 4 ? 32 : 128)) throw new Error(`IMAGE_URL_BLOCKED_NETWORKS: ${JSON.stringify(cidr)} is not a CIDR such as 127.0.0.0/8 or ::1/128`)
      this.list.addSubnet(address, bits, family === 4 ? 'ipv4' : 'ipv6')
    }
  }

  /** BlockList matches an IPv4-mapped IPv6 address (::ffff:127.0.0.1) against the IPv4 networks. */
  blocked(address: string): boolean {
    const family = isIP(address)
    return family !== 0 && this.list.check(address, family === 4 ? 'ipv4' : 'ipv6')
  }

  /** For `http.request`'s `lookup`: dns.lookup without the refused addresses, an error when none is left. */
  readonly lookup = (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, [])
      const allowed = addresses.filter((a) => !this.blocked(a.address))
      if (allowed.length === 0) return callback(Object.assign(new BlockedAddress(hostname, addresses[0]?.address ?? ''), { code: 'EADDRBLOCKED' }), [])
      if (options.all) return callback(null, allowed)
      callback(null, allowed[0]!.address, allowed[0]!.family)
    })
  }
}

const guards = new Map<string, AddressGuard>()
/** One guard per setting value (the setting does not change while the device runs). */
export function addressGuard(networks: string): AddressGuard {
  let guard = guards.get(networks)
  if (!guard) guards.set(networks, guard = new AddressGuard(networks))
  return guard
}
