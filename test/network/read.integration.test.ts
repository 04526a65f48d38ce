import { readdirSync, readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import QueryAdapters from '../../functions/network/QueryAdapters.ts'
import QueryDns from '../../functions/network/QueryDns.ts'
import QueryRoutes from '../../functions/network/QueryRoutes.ts'
import { parseResolvConf } from '../../runtime/network/read.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import { createNamespace, isRoot, type TestNamespace } from '../helpers/netns.ts'

// /proc/net/route holds IPv4 addresses as little-endian hex: an independent view of the table.
const hexToIpv4 = (hex: string) => [0, 1, 2, 3].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).reverse().join('.')

describe('network read paths on the host (spec 4.10 Network)', () => {
  let t: TestRuntime
  beforeAll(async () => { t = await createTestRuntime() })
  afterAll(async () => { await t.close() })

  it('lists every adapter the kernel has, loopback with its addresses', async () => {
    const result = await QueryAdapters.handle({}, t.ctx())
    expect(result.rows.map((a) => a.name).sort()).toEqual(readdirSync('/sys/class/net').sort())
    expect(result.total).toBe(result.rows.length)
    const lo = result.rows.find((a) => a.name === 'lo')!
    expect(lo).toMatchObject({ type: 'loopback', state: 'unknown', mode: 'static', gateway: null, speedMbps: null })
    expect(lo.ipv4).toContainEqual({ address: '127.0.0.1', prefix: 8, dynamic: false, scope: 'host' })
    for (const adapter of result.rows) {
      const mac = readFileSync(`/sys/class/net/${adapter.name}/address`, 'utf8').trim()
      if (adapter.type !== 'none') expect(adapter.mac).toBe(mac)
      expect(adapter.state).toBe(readFileSync(`/sys/class/net/${adapter.name}/operstate`, 'utf8').trim())
    }
  })

  it('reports the default route the kernel routes by', async () => {
    const routes = await QueryRoutes.handle({}, t.ctx())
    const kernelDefault = readFileSync('/proc/net/route', 'utf8').split('\n').slice(1).map((l) => l.trim().split(/\s+/))
      .filter((f) => f[1] === '00000000' && f[7] === '00000000').sort((a, b) => Number(a[6]) - Number(b[6]))[0]
    if (!kernelDefault) expect(routes.defaultRoute).toBeNull()
    else expect(routes.defaultRoute).toMatchObject({ family: 'inet', destination: 'default', dev: kernelDefault[0], gateway: hexToIpv4(kernelDefault[2]!) })
    const adapters = await QueryAdapters.handle({}, t.ctx())
    if (kernelDefault) expect(adapters.rows.find((a) => a.name === kernelDefault[0])!.gateway).toBe(hexToIpv4(kernelDefault[2]!))
  })

  it('reports the DNS servers of resolv.conf', async () => {
    const dns = await QueryDns.handle({}, t.ctx())
    expect(dns.source).toMatch(/resolv\.conf$/)
    expect(dns).toMatchObject(parseResolvConf(readFileSync(dns.source, 'utf8')))
  })

  it('parses resolv.conf: servers in order, the last search/domain line, comments dropped', () => {
    expect(parseResolvConf('# generated\nnameserver 10.0.0.1\nsearch a.example b.example\nnameserver fd00::53 ; v6\noptions ndots:2\ndomain c.example\n'))
      .toEqual({ servers: ['10.0.0.1', 'fd00::53'], searchDomains: ['c.example'] })
    expect(parseResolvConf('')).toEqual({ servers: [], searchDomains: [] })
  })
})

describe.runIf(isRoot())('network read paths inside a namespace', () => {
  let ns: TestNamespace
  let t: TestRuntime
  let network: TestRuntime['runtime']['services']['network']
  beforeAll(async () => {
    ns = createNamespace()
    ns.ip('addr', 'add', '10.77.0.2/24', 'dev', ns.adapter)
    ns.ip('route', 'add', 'default', 'via', '10.77.0.1', 'dev', ns.adapter)
    // a leased address (finite lifetime): the kernel's `dynamic` flag
    ns.ip('addr', 'add', '10.78.0.9/16', 'dev', ns.peer, 'valid_lft', '300', 'preferred_lft', '300')
    ns.writeResolvConf('nameserver 10.77.0.53\nsearch lab.example\n')
    t = await createTestRuntime({ networkNamespace: ns.name })
    network = t.runtime.services.network
  })
  afterAll(async () => {
    await t?.close()
    ns?.remove()
  })

  it('reads addresses, prefix, gateway, link state and DHCP-or-static of the namespace adapters', async () => {
    const adapters = await network.adapters()
    expect(adapters.map((a) => a.name).sort()).toEqual(['lo', ns.adapter, ns.peer].sort())
    const dev = adapters.find((a) => a.name === ns.adapter)!
    expect(dev).toMatchObject({
      type: 'ether', state: 'up', carrier: true, mtu: 1500, gateway: '10.77.0.1', mode: 'static', modeSource: 'kernel address flags',
      ipv4: [{ address: '10.77.0.2', prefix: 24, dynamic: false, scope: 'global' }],
    })
    expect(dev.mac).toMatch(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/)
    expect(dev.speedMbps).toBe(10000) // veth reports 10 Gbit/s
    const peer = adapters.find((a) => a.name === ns.peer)!
    expect(peer).toMatchObject({ mode: 'dhcp', gateway: null, ipv4: [{ address: '10.78.0.9', prefix: 16, dynamic: true }] })
  })

  it('reads the namespace routes and DNS', async () => {
    const routes = await network.routes()
    expect(routes.defaultRoute).toEqual({ family: 'inet', destination: 'default', gateway: '10.77.0.1', dev: ns.adapter, protocol: null, scope: null, metric: null, preferredSource: null })
    expect(routes.routes).toContainEqual(expect.objectContaining({ destination: '10.77.0.0/24', dev: ns.adapter, protocol: 'kernel', scope: 'link', preferredSource: '10.77.0.2' }))
    expect(await network.dns()).toEqual({ servers: ['10.77.0.53'], searchDomains: ['lab.example'], source: '/etc/resolv.conf' })
  })
})
