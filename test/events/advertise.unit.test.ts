import type os from 'node:os'
import { describe, expect, it } from 'vitest'
import { httpAdvertiser } from '../../runtime/events/advertise.ts'

const address = (addr: string, family: 'IPv4' | 'IPv6', internal = false) =>
  ({ address: addr, family, internal, netmask: '', mac: '00:00:00:00:00:00', cidr: null, ...(family === 'IPv6' ? { scopeid: 0 } : {}) }) as os.NetworkInterfaceInfo
const machine: ReturnType<typeof os.networkInterfaces> = {
  lo: [address('127.0.0.1', 'IPv4', true), address('::1', 'IPv6', true)],
  eth0: [address('fe80::5', 'IPv6'), address('2001:db8::5', 'IPv6'), address('192.0.2.5', 'IPv4')],
  wlan0: [address('198.51.100.7', 'IPv4')],
}

describe('the HTTP address in the MQTT registration (README "Several devices")', () => {
  const urls = (advertisedUrl: string, host: string) => httpAdvertiser({ advertisedUrl, host }, () => machine)(8080).urls

  it('is ADVERTISED_URL alone when set (NAT, a published container port)', () => {
    expect(urls('https://device-7.example:443/', '0.0.0.0')).toEqual(['https://device-7.example:443'])
  })

  it('is the bound address when HOST names one', () => {
    expect(urls('', '127.0.0.1')).toEqual(['http://127.0.0.1:8080'])
    expect(urls('', '2001:db8::5')).toEqual(['http://[2001:db8::5]:8080'])
  })

  it('on a wildcard HOST, is each interface address: IPv4, then IPv6 without link-local ones, loopback last', () => {
    expect(urls('', '0.0.0.0')).toEqual(['http://192.0.2.5:8080', 'http://198.51.100.7:8080', 'http://[2001:db8::5]:8080', 'http://127.0.0.1:8080'])
    expect(urls('', '::')).toEqual(urls('', '0.0.0.0'))
  })

  it.each(['ftp://device', 'device:8080', 'http://admin:secret@device', 'http://device/?a=1', 'http://device/#x'])('refuses ADVERTISED_URL %s at start', (value) => {
    expect(() => httpAdvertiser({ advertisedUrl: value, host: '0.0.0.0' }, () => machine)).toThrow(/^ADVERTISED_URL: expected an http\(s\) address without credentials, query or fragment$/)
  })
})
