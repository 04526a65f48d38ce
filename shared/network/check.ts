/**
 * The checks of an adapter change (spec 4.10 Network), free of node modules so the device and
 * the console's edit form run the same code: the device stays the authority, the form only
 * shows the same refusal (field and reason) before anything is sent.
 */

/** Limits of a change's lists and confirm window (the AdapterChange schema's, also checked by the console's form). */
export const CHANGE_LIMITS = { dns: 3, searchDomains: 6, searchDomainPattern: '^[A-Za-z0-9.-]+$', searchDomainLength: 253, confirmSeconds: { min: 10, max: 3600 } } as const

/** The device refuses a change with InvalidParam naming `field` (a JSON pointer into the request). */
export interface ChangeProblem {
  field: string
  reason: string
  extra: Record<string, unknown>
}

/** What the checks read of a change (AdapterConfig, or what the console's form holds). */
export interface ConfigFields {
  mode: 'static' | 'dhcp'
  address?: string
  prefix?: number
  gateway?: string
  dns?: string[]
}

// The address grammars of node:net's isIP (lib/internal/net.js), so the browser accepts exactly what the device does.
const V4_SEG = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])'
const V4 = `(?:${V4_SEG}\\.){3}${V4_SEG}`
const V6_SEG = '(?:[0-9a-fA-F]{1,4})'
const IPV4 = new RegExp(`^${V4}$`)
const IPV6 = new RegExp('^(?:' +
  `(?:${V6_SEG}:){7}(?:${V6_SEG}|:)|` +
  `(?:${V6_SEG}:){6}(?:${V4}|:${V6_SEG}|:)|` +
  `(?:${V6_SEG}:){5}(?::${V4}|(?::${V6_SEG}){1,2}|:)|` +
  `(?:${V6_SEG}:){4}(?:(?::${V6_SEG}){0,1}:${V4}|(?::${V6_SEG}){1,3}|:)|` +
  `(?:${V6_SEG}:){3}(?:(?::${V6_SEG}){0,2}:${V4}|(?::${V6_SEG}){1,4}|:)|` +
  `(?:${V6_SEG}:){2}(?:(?::${V6_SEG}){0,3}:${V4}|(?::${V6_SEG}){1,5}|:)|` +
  `(?:${V6_SEG}:){1}(?:(?::${V6_SEG}){0,4}:${V4}|(?::${V6_SEG}){1,6}|:)|` +
  `(?::(?:(?::${V6_SEG}){0,5}:${V4}|(?::${V6_SEG}){1,7}|:))` +
  ')(?:%[0-9a-zA-Z-.:]{1,})?$')

/** 4 or 6 for an IPv4 or IPv6 address, 0 otherwise (as node:net's isIP). */
export const ipVersion = (text: string): 0 | 4 | 6 => (IPV4.test(text) ? 4 : IPV6.test(text) ? 6 : 0)

const ipv4ToInt = (text: string): number | null =>
  IPV4.test(text) ? text.split('.').reduce((n, p) => n * 256 + Number(p), 0) : null
const intToIpv4 = (n: number) => [24, 16, 8, 0].map((shift) => (n >>> shift) & 255).join('.')
const maskOf = (prefix: number) => (prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0)

const problem = (field: string, reason: string, extra: Record<string, unknown> = {}): ChangeProblem => ({ field, reason, extra })

/** A usable unicast host address: not 0/8, loopback, link-local, multicast or reserved. */
function hostProblem(field: string, text: string): ChangeProblem | number {
  const value = ipv4ToInt(text)
  if (value === null) return problem(field, 'is not an IPv4 address (a.b.c.d)', { value: text })
  const first = value >>> 24
  if (first === 0 || first === 127 || first >= 224 || (value >>> 16) === 0xa9fe)
    return problem(field, 'is not a usable host address (0/8, 127/8, 169.254/16, multicast and reserved ranges are refused)', { value: text })
  return value
}

function staticProblem(config: ConfigFields): ChangeProblem | null {
  if (config.address === undefined) return problem('/address', 'is required with mode "static"')
  if (config.prefix === undefined) return problem('/prefix', 'is required with mode "static"')
  const { prefix } = config
  if (!Number.isInteger(prefix) || prefix < 8 || prefix > 30)
    return problem('/prefix', 'must be 8 to 30 for a host address on a shared link', { value: prefix })
  const address = hostProblem('/address', config.address)
  if (typeof address !== 'number') return address
  const mask = maskOf(prefix)
  const network = (address & mask) >>> 0
  const broadcast = (network | ~mask) >>> 0
  const subnet = `${intToIpv4(network)}/${prefix}`
  if (address === network || address === broadcast)
    return problem('/address', `is the ${address === network ? 'network' : 'broadcast'} address of ${subnet}`, { value: config.address, subnet })
  if (config.gateway === undefined) return null
  const gateway = hostProblem('/gateway', config.gateway)
  if (typeof gateway !== 'number') return gateway
  if (((gateway & mask) >>> 0) !== network)
    return problem('/gateway', `is outside the subnet ${subnet} of the address`, { value: config.gateway, subnet })
  if (gateway === address || gateway === network || gateway === broadcast)
    return problem('/gateway', `cannot be the address itself or the network or broadcast address of ${subnet}`, { value: config.gateway, subnet })
  return null
}

/**
 * The first thing wrong with a change, as the device reports it, or null: well-formed
 * addresses, a prefix that leaves room for hosts, the address neither the network nor the
 * broadcast address, the gateway inside the subnet, DNS servers IP addresses.
 */
export function adapterConfigProblem(config: ConfigFields): ChangeProblem | null {
  if (config.mode === 'dhcp') {
    for (const field of ['address', 'prefix', 'gateway'] as const)
      if (config[field] !== undefined) return problem(`/${field}`, 'is set by DHCP: leave it out with mode "dhcp"')
  } else {
    const found = staticProblem(config)
    if (found) return found
  }
  for (const [i, server] of (config.dns ?? []).entries())
    if (ipVersion(server) === 0) return problem(`/dns/${i}`, 'is not an IPv4 or IPv6 address', { value: server })
  return null
}
