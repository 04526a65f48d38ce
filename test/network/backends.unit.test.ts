import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../runtime/log.ts'
import { backendPlugins, detectBackend } from '../../runtime/network/backends/index.ts'
import { ifupdownMethods, rewriteIfupdown } from '../../runtime/network/backends/ifupdown-file.ts'
import { networkdFile } from '../../runtime/network/backends/systemd-networkd.ts'
import type { BackendContext } from '../../runtime/network/backends/types.ts'
import { HostCommandError, type HostAccess } from '../../runtime/network/host.ts'
import { HostNetworkService } from '../../runtime/network/service.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'

/**
 * A host whose programs answer from a table (joined argv → stdout, an Error, or a list used in
 * turn); anything else fails as absent.
 */
function fakeHost(answers: Record<string, string | Error | (string | Error)[]> = {}) {
  const commands: string[] = []
  const host: HostAccess = {
    async run(program, args) {
      const command = [program, ...args].join(' ')
      commands.push(command)
      const entry = answers[command] ?? Object.entries(answers).find(([key]) => key.endsWith('*') && command.startsWith(key.slice(0, -1)))?.[1]
      const answer = Array.isArray(entry) ? entry.shift() : entry
      if (answer === undefined) throw new HostCommandError(command, `${program}: not found`, 'ENOENT')
      if (answer instanceof Error) throw answer
      return answer
    },
    async readText() { return null },
  }
  return { host, commands }
}

const STATIC = { mode: 'static' as const, address: '192.168.10.20', prefix: 24, gateway: '192.168.10.1', dns: ['192.168.10.53', '1.1.1.1'], searchDomains: ['site.example'] }

describe('network backends: configuration writers in a temporary root (never /etc)', () => {
  let root: string
  const context = (host: HostAccess): BackendContext => ({ host, root, resolvConf: path.join(root, 'etc/resolv.conf') })
  beforeAll(() => { root = mkdtempSync(path.join(tmpdir(), 'net-backends-')) })
  afterAll(() => rmSync(root, { recursive: true, force: true }))
  afterEach(() => { rmSync(path.join(root, 'etc'), { recursive: true, force: true }) })

  it('systemd-networkd: writes its own .network file, reloads, and restores the file as it was', async () => {
    const { host, commands } = fakeHost({ 'networkctl reload': '', 'networkctl reconfigure eth0': '' })
    const backend = backendPlugins['systemd-networkd'].create(context(host))
    const file = networkdFile(root, 'eth0')
    expect(file).toBe(path.join(root, 'etc/systemd/network/05-cwai-eth0.network'))
    const absent = await backend.capture('eth0')
    await backend.apply('eth0', STATIC)
    expect(readFileSync(file, 'utf8')).toBe([
      '# Written by the device (network settings, confirm-or-rollback); replaced on the next change.',
      '[Match]', 'Name=eth0', '', '[Network]', 'Address=192.168.10.20/24', 'Gateway=192.168.10.1',
      'DNS=192.168.10.53', 'DNS=1.1.1.1', 'Domains=site.example', '',
    ].join('\n'))
    expect(commands).toEqual(['networkctl reload', 'networkctl reconfigure eth0'])
    const before = await backend.capture('eth0')
    await backend.apply('eth0', { mode: 'dhcp' })
    expect(readFileSync(file, 'utf8')).toContain('[Network]\nDHCP=ipv4\n')
    await backend.restore('eth0', before)
    expect(readFileSync(file, 'utf8')).toContain('Address=192.168.10.20/24')
    await backend.restore('eth0', absent)
    expect(existsSync(file)).toBe(false)
    expect(commands.length).toBe(8)
  })

  it('ifupdown: replaces only the adapter\'s inet stanza, cycles it, and restores the file byte for byte', async () => {
    const original = [
      '# interfaces(5)', 'source /etc/network/interfaces.d/*', '', 'auto lo', 'iface lo inet loopback', '',
      'auto eth0', 'iface eth0 inet dhcp', '    hostname edge', 'iface eth0 inet6 auto', '',
      'allow-hotplug eth1', 'iface eth1 inet static', '    address 10.0.0.2/8', '',
    ].join('\n')
    mkdirSync(path.join(root, 'etc/network'), { recursive: true })
    const file = path.join(root, 'etc/network/interfaces')
    writeFileSync(file, original)
    const { host, commands } = fakeHost({ 'ifdown --force eth0': new Error('not up'), 'ifup eth0': '', 'ifdown --force eth2': '', 'ifup eth2': '' })
    const backend = backendPlugins.ifupdown.create(context(host))
    const before = await backend.capture('eth0')
    await backend.apply('eth0', STATIC)
    expect(readFileSync(file, 'utf8')).toBe([
      '# interfaces(5)', 'source /etc/network/interfaces.d/*', '', 'auto lo', 'iface lo inet loopback', '',
      'auto eth0', 'iface eth0 inet static', '    address 192.168.10.20/24', '    gateway 192.168.10.1',
      '    dns-nameservers 192.168.10.53 1.1.1.1', '    dns-search site.example', 'iface eth0 inet6 auto', '',
      'allow-hotplug eth1', 'iface eth1 inet static', '    address 10.0.0.2/8', '',
    ].join('\n'))
    expect(commands).toEqual(['ifdown --force eth0', 'ifup eth0'])
    expect(ifupdownMethods(readFileSync(file, 'utf8'))).toEqual(new Map([['lo', 'loopback'], ['eth0', 'static'], ['eth1', 'static']]))
    await backend.restore('eth0', before)
    expect(readFileSync(file, 'utf8')).toBe(original)
    // an adapter without a stanza gets one, with `auto`
    await backend.apply('eth2', { mode: 'dhcp' })
    expect(readFileSync(file, 'utf8')).toBe(original + '\nauto eth2\niface eth2 inet dhcp\n')
  })

  it('ifupdown text: an adapter already marked allow-hotplug gets no second auto line', () => {
    expect(rewriteIfupdown('allow-hotplug eth0\n', 'eth0', { mode: 'dhcp' })).toBe('allow-hotplug eth0\n\niface eth0 inet dhcp\n')
    expect(rewriteIfupdown('', 'eth0', { mode: 'static', address: '10.1.1.2', prefix: 24 })).toBe('auto eth0\niface eth0 inet static\n    address 10.1.1.2/24\n')
  })

  it('networkmanager: modifies the adapter\'s connection through nmcli and restores its old IPv4 settings', async () => {
    const { host, commands } = fakeHost({
      'nmcli -g GENERAL.CONNECTION device show eth0': 'Wired connection 1\n',
      'nmcli -g connection.uuid connection show Wired connection 1': '3f1c-uuid\n',
      'nmcli -g ipv4.method,ipv4.addresses,ipv4.gateway,ipv4.dns,ipv4.dns-search connection show 3f1c-uuid': 'auto\n\n\n10.9.9.9\n\n',
      'nmcli connection modify*': '',
      'nmcli connection up 3f1c-uuid': '',
    })
    const backend = backendPlugins.networkmanager.create(context(host))
    const before = await backend.capture('eth0')
    expect(before).toEqual({ uuid: '3f1c-uuid', ipv4: { method: 'auto', addresses: '', gateway: '', dns: '10.9.9.9', dnsSearch: '' } })
    commands.length = 0
    await backend.apply('eth0', STATIC)
    expect(commands.slice(-2)).toEqual([
      'nmcli connection modify 3f1c-uuid ipv4.method manual ipv4.addresses 192.168.10.20/24 ipv4.gateway 192.168.10.1 ipv4.dns 192.168.10.53,1.1.1.1 ipv4.dns-search site.example',
      'nmcli connection up 3f1c-uuid',
    ])
    commands.length = 0
    await backend.restore('eth0', before)
    expect(commands).toEqual(['nmcli connection modify 3f1c-uuid ipv4.method auto ipv4.addresses  ipv4.gateway  ipv4.dns 10.9.9.9 ipv4.dns-search ', 'nmcli connection up 3f1c-uuid'])
  })

  it('detects the backend the host uses, and none where none runs', async () => {
    expect(await detectBackend(context(fakeHost().host))).toBeNull()
    expect(await detectBackend(context(fakeHost({ 'systemctl is-active systemd-networkd': 'active\n' }).host))).toBe('systemd-networkd')
    expect(await detectBackend(context(fakeHost({ 'systemctl is-active systemd-networkd': 'inactive\n' }).host))).toBeNull()
    expect(await detectBackend(context(fakeHost({ 'nmcli -t -f RUNNING general': 'running\n', 'systemctl is-active systemd-networkd': 'active\n' }).host))).toBe('networkmanager')
    expect(await detectBackend(context(fakeHost({ 'ifup --version': 'ifup 0.8' }).host))).toBeNull() // no interfaces file
    mkdirSync(path.join(root, 'etc/network'), { recursive: true })
    writeFileSync(path.join(root, 'etc/network/interfaces'), 'auto lo\n')
    expect(await detectBackend(context(fakeHost({ 'ifup --version': 'ifup 0.8' }).host))).toBe('ifupdown')
  })
})

describe('network changes refused before anything changes', () => {
  let t: TestRuntime
  let root: string
  const log = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }))
  const service = (host: HostAccess, backend = '') => new HostNetworkService({
    db: t.runtime.services.db, now: () => Date.now(), events: t.runtime.services.events, log, backend, confirmTimeoutMs: 60_000, configRoot: root, host,
  })
  beforeAll(async () => {
    t = await createTestRuntime()
    root = mkdtempSync(path.join(tmpdir(), 'net-refusals-'))
  })
  afterAll(async () => {
    await t.close()
    rmSync(root, { recursive: true, force: true })
  })

  const ETH0 = { 'ip -json addr show dev eth0': '[{"ifname":"eth0","link_type":"ether","addr_info":[{"family":"inet","local":"10.0.0.2","prefixlen":8,"scope":"global"}]}]' }

  it('refuses with NetworkBackendUnavailable where no backend is found', async () => {
    const network = service(fakeHost(ETH0).host)
    await expect(network.apply({ adapter: 'eth0', ...STATIC }, 'admin')).rejects.toMatchObject({ item: { messageKey: 'api.error.NetworkBackendUnavailable' } })
    expect(await network.changeStatus()).toEqual({ pending: null, last: null, now: expect.any(Number) })
  })

  it('refuses with NetworkChangeNotPermitted when the kernel says so, and restores what it touched', async () => {
    const denied = new HostCommandError('ip -4 addr flush', 'RTNETLINK answers: Operation not permitted\n', 2)
    const { host, commands } = fakeHost({
      ...ETH0,
      'ip -json -4 addr show dev eth0': '[{"addr_info":[{"local":"10.0.0.2","prefixlen":8,"scope":"global"}]}]',
      'ip -json -4 route show default dev eth0': '[]',
      'ip -4 addr flush dev eth0 scope global': [denied, ''],
      'ip -4 route flush default dev eth0': '',
      'ip addr add 10.0.0.2/8 dev eth0': '',
    })
    const network = service(host, 'iproute2-runtime')
    await expect(network.apply({ adapter: 'eth0', ...STATIC }, 'admin'))
      .rejects.toMatchObject({ item: { messageKey: 'api.error.NetworkChangeNotPermitted', details: { reason: 'RTNETLINK answers: Operation not permitted' } } })
    // the apply stopped at its first command; the restore put the old address back
    expect(commands.slice(-4)).toEqual(['ip -4 addr flush dev eth0 scope global', 'ip -4 addr flush dev eth0 scope global', 'ip -4 route flush default dev eth0', 'ip addr add 10.0.0.2/8 dev eth0'])
    expect(await network.changeStatus()).toMatchObject({ pending: null, last: { outcome: 'rolled-back', reason: 'apply failed' } })
  })

  it('refuses an unknown NETWORK_BACKEND at start', () => {
    expect(() => service(fakeHost().host, 'netplan')).toThrow(/NETWORK_BACKEND/)
  })
})
