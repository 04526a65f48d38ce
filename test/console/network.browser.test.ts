/**
 * The console's Network page (spec 4.10 Network; README "Network") in real Chromium against
 * the real device: the host's adapters as `ip` reports them, a change refused by field before
 * anything is sent, connectivity checks and quality configured on the page and run against a
 * listener on loopback. The host's network is never changed: SetAdapter is blocked for the
 * host's device. Changes (the device's own refusal by field, the confirm countdown, confirm
 * and rollback) run against a second device whose network is a namespace the test creates.
 */
import { execFileSync } from 'node:child_process'
import { createServer, type Server } from 'node:net'
import { expect } from 'vitest'
import type { Page } from 'playwright-core'
import { seriousViolations } from '../helpers/axe.ts'
import { browserTest as test, openConsole } from '../helpers/browser.ts'
import { CHANGED_PASSWORD, freePort, startDevice, type DeviceProcess } from '../helpers/device.ts'
import { createNamespace, isRoot, type TestNamespace } from '../helpers/netns.ts'

let device: DeviceProcess
let listener: Server
let accepted = 0

// The session changes the initial password: the pages sign in with CHANGED_PASSWORD.
test.beforeAll(async ({ device: started, mtk: _session }) => {
  listener = createServer((socket) => { accepted++; socket.destroy() })
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  device = started
})
test.afterAll(async () => {
  await new Promise((resolve) => listener?.close(resolve))
})

async function signInAt(page: Page, url: string) {
  await page.goto(url + '/console/#/network')
  await page.getByLabel('Password').fill(CHANGED_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Network', level: 1 }).waitFor()
  await page.getByTestId('adapters').waitFor()
}

interface IpLink { ifname: string; address?: string; link_type: string; addr_info: { family: string; local: string; prefixlen: number }[] }

test.describe('console: network', () => {
  test('lists the host adapters, refuses a wrong change by field without sending it, and runs checks and quality (1280 px)', { timeout: 180_000 }, async ({ browser }) => {
    const { page, foreignRequests, pageErrors, screenshot } = await openConsole(browser, device.url, 1280)
    // Whatever the page does, no change reaches the host's network from this test.
    const sent: string[] = []
    await page.route('**/gtw/cwai/network/SetAdapter', (route) => { sent.push(route.request().postData() ?? ''); return route.abort() })
    await signInAt(page, device.url)

    const links = JSON.parse(execFileSync('ip', ['-json', 'addr', 'show'], { encoding: 'utf8' })) as IpLink[]
    expect(await page.getByTestId('adapters').locator('tbody tr').count()).toBe(links.length)
    for (const link of links) {
      const row = page.getByTestId(`adapter-${link.ifname}`)
      expect(await row.locator('[data-label="MAC"]').textContent(), link.ifname).toBe(link.link_type === 'none' ? '—' : link.address ?? '—')
      const ipv4 = link.addr_info.filter((a) => a.family === 'inet').map((a) => `${a.local}/${a.prefixlen}`)
      expect(await row.locator('[data-label="IPv4"] .net-address').allTextContents(), link.ifname).toEqual(ipv4)
    }
    const [defaultRoute] = (JSON.parse(execFileSync('ip', ['-json', '-4', 'route', 'show', 'default'], { encoding: 'utf8' })) as { gateway: string; dev: string; metric?: number }[])
      .sort((a, b) => (a.metric ?? 0) - (b.metric ?? 0))
    expect(await page.getByTestId('default-route').textContent()).toBe(defaultRoute ? `via ${defaultRoute.gateway} on ${defaultRoute.dev}${defaultRoute.metric === undefined ? '' : `, metric ${defaultRoute.metric}`}` : 'none')

    // The form runs the device's own checks: a gateway outside the address's subnet is named at its field.
    const adapter = links.find((l) => l.link_type !== 'loopback')!
    await page.getByRole('button', { name: `Change ${adapter.ifname}`, exact: true }).click()
    await page.getByTestId('net-static').check()
    await page.getByTestId('net-address').fill('10.88.0.5')
    await page.getByTestId('net-prefix').fill('24')
    await page.getByTestId('net-gateway').fill('10.99.0.1')
    await page.getByTestId('net-apply').click()
    expect(await page.getByTestId('net-gateway-error').textContent()).toBe('“10.99.0.1” is outside the subnet 10.88.0.0/24 of the address.')
    expect(await page.getByTestId('net-gateway').getAttribute('aria-invalid')).toBe('true')
    expect(await seriousViolations(page, 'Network change form with an error')).toEqual([])
    await page.getByTestId('net-gateway').fill('10.88.0.1')
    await page.getByTestId('net-dns').fill('10.88.0.53 dns.example')
    await page.getByTestId('net-apply').click()
    expect(await page.getByTestId('net-dns-error').textContent()).toBe('“dns.example” is not an IPv4 or IPv6 address.')
    expect(await page.getByTestId('net-gateway-error').count()).toBe(0)
    await page.getByRole('button', { name: 'Cancel' }).click()
    expect(sent).toEqual([])

    // Checks configured on the page; the device probes exactly those.
    const closed = await freePort()
    const addCheck = async (name: string, port: number) => {
      await page.getByTestId('new-check-name').fill(name)
      await page.getByTestId('new-check-host').fill('127.0.0.1')
      await page.getByTestId('new-check-port').fill(String(port))
      await page.getByTestId('add-check').click()
      await page.getByTestId(`check-${name}`).waitFor()
    }
    await addCheck('listener', (listener.address() as { port: number }).port)
    await addCheck('closed', closed)
    await page.getByTestId('run-checks').click()
    const result = (name: string, cell: string) => page.getByTestId(`check-${name}`).getByTestId(cell).textContent()
    await expect.poll(() => result('listener', 'check-result')).toBe('OK')
    expect(await result('listener', 'check-time')).toMatch(/^\d+(\.\d+)? ms$/)
    expect(await result('closed', 'check-result')).toBe('Failed')
    expect(await result('closed', 'check-detail')).toBe('ECONNREFUSED')
    expect(accepted).toBe(1)

    await page.getByTestId('new-target-name').fill('loopback')
    await page.getByTestId('new-target-host').fill('127.0.0.1')
    await page.getByTestId('new-target-port').fill(String((listener.address() as { port: number }).port))
    await page.getByTestId('add-target').click()
    await page.getByTestId('quality-loopback').waitFor()
    await page.getByTestId('measure-quality').click()
    await expect.poll(() => page.getByTestId('quality-loopback').locator('[data-label="Received"]').textContent()).toBe('5 of 5')
    expect(await page.getByTestId('quality-latency').textContent()).toMatch(/^[\d.]+ \/ [\d.]+ \/ [\d.]+ ms$/)
    expect(accepted).toBe(6)
    expect((await device.post('/gtw/cwai/network/QueryTargets', {}, await device.adminToken())).body.resData).toEqual({
      qualityTargets: [{ name: 'loopback', host: '127.0.0.1', port: (listener.address() as { port: number }).port }],
      checks: [{ name: 'listener', type: 'tcp', host: '127.0.0.1', port: (listener.address() as { port: number }).port }, { name: 'closed', type: 'tcp', host: '127.0.0.1', port: closed }],
      samples: 5, timeoutMs: 2000,
    })
    await screenshot('network')
    expect(sent).toEqual([])
    expect(foreignRequests).toEqual([])
    expect(pageErrors).toEqual([])
  })
})

test.describe.runIf(isRoot())('console: network changes in a namespace', () => {
  const CONFIRM_MS = 8000
  let ns: TestNamespace
  let nsDevice: DeviceProcess
  const addresses = () => (JSON.parse(ns.ip('-json', '-4', 'addr', 'show', 'dev', ns.adapter))[0]?.addr_info ?? []).map((a: { local: string; prefixlen: number }) => `${a.local}/${a.prefixlen}`)
  test.beforeAll(async () => {
    ns = createNamespace()
    ns.ip('addr', 'add', '10.77.0.2/24', 'dev', ns.adapter)
    ns.ip('link', 'add', 'gone', 'type', 'veth', 'peer', 'name', 'gone-peer')
    nsDevice = await startDevice({ env: { NETWORK_NAMESPACE: ns.name, NETWORK_BACKEND: 'iproute2-runtime', NETWORK_CONFIRM_TIMEOUT_MS: String(CONFIRM_MS) } })
    await nsDevice.adminToken()
  })
  test.afterAll(async () => {
    await nsDevice?.stop()
    nsDevice?.cleanup()
    ns?.remove()
  })

  test('shows the device\'s refusal by field, counts a change down, confirms one and lets one roll back (1280 px)', { timeout: 180_000 }, async ({ browser }) => {
    const { page, foreignRequests, pageErrors, screenshot } = await openConsole(browser, nsDevice.url, 1280)
    await signInAt(page, nsDevice.url)
    const change = async (adapter: string, address: string, seconds = '') => {
      await page.getByRole('button', { name: `Change ${adapter}`, exact: true }).click()
      await page.getByTestId('net-static').check()
      await page.getByTestId('net-address').fill(address)
      await page.getByTestId('net-prefix').fill('24')
      await page.getByTestId('net-gateway').fill('')
      await page.getByTestId('net-confirmTimeoutSeconds').fill(seconds)
    }

    // The adapter vanishes after the form was opened: only the device can tell, and it names the field.
    await change('gone', '10.66.0.5')
    ns.ip('link', 'del', 'gone')
    await page.getByTestId('net-apply').click()
    expect(await page.getByTestId('net-adapter-error').textContent()).toBe('“gone” is not an adapter of this device (or is the loopback).')
    await page.getByRole('button', { name: 'Cancel' }).click()

    await change(ns.adapter, '10.88.0.5', '120')
    await page.getByTestId('net-apply').click()
    await page.getByTestId('pending-change').waitFor()
    expect(addresses()).toEqual(['10.88.0.5/24'])
    expect(await page.getByTestId('countdown').textContent()).toMatch(/^(2:00|1:[0-5]\d) left to confirm$/)
    expect(await page.getByTestId('timeout-explained').textContent()).toMatch(/^Unless it is confirmed by .+, the device restores the previous configuration by itself \(the change is rolled back\)/)
    expect(await page.getByTestId('address-advice').textContent()).toContain('moves from 10.77.0.2 to 10.88.0.5. This console reaches the device through 127.0.0.1, which the change does not touch')
    expect(await page.getByTestId('new-address-link').getAttribute('href')).toBe(`http://10.88.0.5:${nsDevice.port}/console/#/network`)
    await expect.poll(() => page.getByTestId(`adapter-${ns.adapter}`).locator('[data-label="IPv4"]').textContent()).toBe('10.88.0.5/24')
    expect(await page.getByRole('button', { name: `Change ${ns.adapter}`, exact: true }).isDisabled()).toBe(true)
    expect(await seriousViolations(page, 'Network pending change')).toEqual([])
    await screenshot('network-pending')
    await page.getByTestId('confirm-change').click()
    await expect.poll(() => page.getByTestId('last-change').textContent()).toMatch(/^The change of veth-dev was confirmed at /)
    const mtk = await nsDevice.adminToken()
    expect((await nsDevice.post('/gtw/cwai/network/QueryChange', {}, mtk)).body.resData).toMatchObject({ pending: null, last: { outcome: 'confirmed', adapter: ns.adapter } })

    // Not confirmed: the device's default window passes and the previous configuration is back.
    await change(ns.adapter, '10.99.0.7')
    await page.getByTestId('net-apply').click()
    await page.getByTestId('pending-change').waitFor()
    expect(addresses()).toEqual(['10.99.0.7/24'])
    expect(await page.getByTestId('countdown').textContent()).toMatch(/^0:0\d left to confirm$/)
    await expect.poll(() => page.getByTestId('last-change').textContent(), { timeout: CONFIRM_MS + 20_000 })
      .toMatch(/^The change of veth-dev was rolled back at .+: nobody confirmed it in time\. The previous configuration is back\.$/)
    expect(addresses()).toEqual(['10.88.0.5/24'])
    await expect.poll(() => page.getByTestId(`adapter-${ns.adapter}`).locator('[data-label="IPv4"]').textContent()).toBe('10.88.0.5/24')
    expect(foreignRequests).toEqual([])
    expect(pageErrors).toEqual([])
  })
})
