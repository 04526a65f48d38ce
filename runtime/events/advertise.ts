import os from 'node:os'

/** The device's HTTP address in its MQTT registration: what fleet commands upload packages to (docs/deployment.md "Several devices"). */
export interface HttpAdvertisement {
  port: number
  /** Most reachable first: ADVERTISED_URL, else the bound address, else each interface address (IPv4, IPv6, loopback last). */
  urls: string[]
}

const WILDCARD = new Set(['', '0.0.0.0', '::'])
const hostPart = (address: string) => (address.includes(':') ? `[${address}]` : address)

/**
 * Checks ADVERTISED_URL once (a malformed value stops the start, as other settings do) and
 * returns how to describe the HTTP server once its port is known.
 */
export function httpAdvertiser(config: { advertisedUrl: string; host: string }, interfaces: () => ReturnType<typeof os.networkInterfaces> = os.networkInterfaces) {
  const advertised = config.advertisedUrl.trim()
  if (advertised) {
    let url: URL | null = null
    try {
      url = new URL(advertised)
    } catch {
      // refused below
    }
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.search || url.hash)
      // The value is not repeated: it may hold credentials.
      throw new Error('ADVERTISED_URL: expected an http(s) address without credentials, query or fragment')
  }
  return (port: number): HttpAdvertisement => {
    if (advertised) return { port, urls: [advertised.replace(/\/+$/, '')] }
    if (!WILDCARD.has(config.host)) return { port, urls: [`http://${hostPart(config.host)}:${port}`] }
    const addresses = Object.values(interfaces()).flat().filter((a) => a !== undefined)
    // Link-local IPv6 needs a zone index to be dialled: left out.
    const external = addresses.filter((a) => !a.internal && !(a.family === 'IPv6' && a.address.toLowerCase().startsWith('fe80:')))
    const ordered = [...external.filter((a) => a.family === 'IPv4'), ...external.filter((a) => a.family === 'IPv6')].map((a) => a.address)
    return { port, urls: [...new Set([...ordered, '127.0.0.1'])].map((address) => `http://${hostPart(address)}:${port}`) }
  }
}
