import { isIP } from 'node:net'
import { invalidParam } from '../errors/index.ts'
import type { AdapterConfig } from './schemas.ts'

/**
 * Checks of an adapter change before anything is touched (spec 4.10 Network): well-formed
 * addresses, a prefix that leaves room for hosts, the address neither the network nor the
 * broadcast address, the gateway inside the subnet. Throws InvalidParam naming the field.
 */

const ipv4ToInt = (text: string): number | null => {
  const parts = text.split('.')
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255)) return null
  return parts.reduce((n, p) => n * 256 + Number(p), 0)
}
const intToIpv4 = (n: number) => [24, 16, 8, 0].map((shift) => (n >>> shift) & 255).join('.')
const maskOf = (prefix: number) => (prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0)

/** A usable unicast host address: not 0/8, loopback, link-local, multicast or reserved. */
function checkHost(field: string, text: string): number {
  const value = ipv4ToInt(text)
  if (value === null) throw invalidParam(field, 'is not an IPv4 address (a.b.c.d)', { value: text })
  const first = value >>> 24
  if (first === 0 || first === 127 || first >= 224 || (value >>> 16) === 0xa9fe)
    throw invalidParam(field, 'is not a usable host address (0/8, 127/8, 169.254/16, multicast and reserved ranges are refused)', { value: text })
  return value
}

export function validateAdapterConfig(config: AdapterConfig): void {
  if (config.mode === 'dhcp') {
    for (const field of ['address', 'prefix', 'gateway'] as const)
      if (config[field] !== undefined) throw invalidParam(`/${field}`, 'is set by DHCP: leave it out with mode "dhcp"')
  } else {
    if (config.address === undefined) throw invalidParam('/address', 'is required with mode "static"')
    if (config.prefix === undefined) throw invalidParam('/prefix', 'is required with mode "static"')
    const { prefix } = config
    if (!Number.isInteger(prefix) || prefix < 8 || prefix > 30)
      throw invalidParam('/prefix', 'must be 8 to 30 for a host address on a shared link', { value: prefix })
    const address = checkHost('/address', config.address)
    const mask = maskOf(prefix)
    const network = (address & mask) >>> 0
    const broadcast = (network | ~mask) >>> 0
    const subnet = `${intToIpv4(network)}/${prefix}`
    if (address === network || address === broadcast)
      throw invalidParam('/address', `is the ${address === network ? 'network' : 'broadcast'} address of ${subnet}`, { value: config.address, subnet })
    if (config.gateway !== undefined) {
      const gateway = checkHost('/gateway', config.gateway)
      if (((gateway & mask) >>> 0) !== network)
        throw invalidParam('/gateway', `is outside the subnet ${subnet} of the address`, { value: config.gateway, subnet })
      if (gateway === address || gateway === network || gateway === broadcast)
        throw invalidParam('/gateway', `cannot be the address itself or the network or broadcast address of ${subnet}`, { value: config.gateway, subnet })
    }
  }
  for (const [i, server] of (config.dns ?? []).entries())
    if (isIP(server) === 0) throw invalidParam(`/dns/${i}`, 'is not an IPv4 or IPv6 address', { value: server })
}
