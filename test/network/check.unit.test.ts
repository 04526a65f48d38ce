import { isIP } from 'node:net'
import { describe, expect, it } from 'vitest'
import { adapterConfigProblem, ipVersion } from '../../shared/network/check.ts'

// The console's edit form runs these checks in the browser, without node:net: they must
// accept and refuse exactly what the device does.
describe('adapter change checks shared with the console (spec 4.10 Network)', () => {
  it('tells IPv4 and IPv6 addresses apart exactly as node:net isIP does', () => {
    const cases = [
      '10.0.0.1', '255.255.255.255', '0.0.0.0', '01.2.3.4', '1.2.3', '1.2.3.4.5', '256.1.1.1', '1.2.3.04', ' 1.2.3.4', '1.2.3.4 ',
      '::', '::1', 'fe80::1%eth0', '2001:db8::8a2e:370:7334', '2001:0db8:0000:0000:0000:ff00:0042:8329', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7::',
      '1:2:3:4:5:6:7:8:9', '::ffff:10.0.0.1', '1::2::3', '12345::1', 'g::1', ':1', '1:', '', 'example.com', '[::1]', '::ffff:1.2.3.256',
    ]
    for (const text of cases) expect(ipVersion(text), JSON.stringify(text)).toBe(isIP(text))
  })

  it('names the first field in the order the device checks them', () => {
    expect(adapterConfigProblem({ mode: 'static', address: '192.168.1.20', prefix: 24, gateway: '192.168.1.1', dns: ['192.168.1.1', '2001:db8::53'] })).toBeNull()
    expect(adapterConfigProblem({ mode: 'dhcp' })).toBeNull()
    expect(adapterConfigProblem({ mode: 'static', address: '192.168.1.20', prefix: 24, gateway: '192.168.2.1' }))
      .toEqual({ field: '/gateway', reason: 'is outside the subnet 192.168.1.0/24 of the address', extra: { value: '192.168.2.1', subnet: '192.168.1.0/24' } })
    expect(adapterConfigProblem({ mode: 'static', address: '192.168.1.255', prefix: 24, gateway: 'x' })?.field).toBe('/address')
    expect(adapterConfigProblem({ mode: 'static', address: '192.168.1.20', prefix: 31 })?.field).toBe('/prefix')
    expect(adapterConfigProblem({ mode: 'static', address: '169.254.1.20', prefix: 16 })?.field).toBe('/address')
    expect(adapterConfigProblem({ mode: 'static', address: '192.168.1.20', prefix: 24, dns: ['192.168.1.1', 'dns.example'] })?.field).toBe('/dns/1')
    expect(adapterConfigProblem({ mode: 'dhcp', gateway: '192.168.1.1' })?.field).toBe('/gateway')
  })
})
