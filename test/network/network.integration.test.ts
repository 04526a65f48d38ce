import { expect } from 'vitest'
import { deviceTest } from '../helpers/device-fixture.ts'
import { startDevice, type DeviceProcess } from '../helpers/device.ts'
import { createNamespace, isRoot, type TestNamespace } from '../helpers/netns.ts'

const CONFIRM_MS = 4000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The device's network is a namespace of the file's own, with one address on its adapter. */
// eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from this pattern
const test = deviceTest.extend('ns', { scope: 'file' }, async ({}, { onCleanup }) => {
  const ns = createNamespace()
  onCleanup(() => ns.remove())
  ns.ip('addr', 'add', '10.77.0.2/24', 'dev', ns.adapter)
  return ns
})
test.override('deviceOptions', { scope: 'file' }, async ({ ns }: { ns: TestNamespace }) => ({
  env: { NETWORK_NAMESPACE: ns.name, NETWORK_BACKEND: 'iproute2-runtime', NETWORK_CONFIRM_TIMEOUT_MS: String(CONFIRM_MS) },
}))

// The built device over HTTP, its network pointed at a namespace the test creates and removes:
// input validation on the route, and a change that rolls back after the device was killed.
test.describe.runIf(isRoot())('network routes over HTTP, with a device restart in the confirm window', () => {
  let ns: TestNamespace
  let device: DeviceProcess
  let env: Record<string, string>
  /** The file's device started again on its data folder after the kill. */
  let restarted: DeviceProcess | undefined
  const addresses = () => (JSON.parse(ns.ip('-json', '-4', 'addr', 'show', 'dev', ns.adapter))[0]?.addr_info ?? []).map((a: { local: string; prefixlen: number }) => `${a.local}/${a.prefixlen}`)
  const waitForAddresses = async (wanted: string[], ms: number) => {
    for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) if (JSON.stringify(addresses()) === JSON.stringify(wanted)) return true
    return false
  }
  test.beforeAll(async ({ ns: created, deviceOptions, device: started }) => {
    ns = created
    env = deviceOptions.env!
    device = started
  })
  // The restarted device stops before the fixture removes the data folder they share.
  test.afterAll(async () => {
    await restarted?.stop()
  })

  test('reads, validates, applies, and rolls back after a kill and restart', async () => {
    let mtk = await device.adminToken()
    const adapters = await device.post('/gtw/cwai/network/QueryAdapters', {}, mtk)
    expect(adapters.body.resCode).toBe(1)
    expect(adapters.body.resData.rows.find((a: { name: string }) => a.name === ns.adapter).ipv4).toEqual([{ address: '10.77.0.2', prefix: 24, dynamic: false, scope: 'global' }])

    const bad = await device.post('/gtw/cwai/network/SetAdapter', { adapter: ns.adapter, mode: 'static', address: '10.88.0.5', prefix: 33 }, mtk)
    expect(bad.body).toMatchObject({ resCode: 0, resMsg: [{ messageKey: 'api.error.InvalidParam', details: { field: '/prefix' } }] })
    const outside = await device.post('/gtw/cwai/network/SetAdapter', { adapter: ns.adapter, mode: 'static', address: '10.88.0.5', prefix: 24, gateway: '10.99.0.1' }, mtk)
    expect(outside.body).toMatchObject({ resCode: 0, resMsg: [{ messageKey: 'api.error.InvalidParam', details: { field: '/gateway', subnet: '10.88.0.0/24' } }] })
    expect(addresses()).toEqual(['10.77.0.2/24'])

    const applied = await device.post('/gtw/cwai/network/SetAdapter', { adapter: ns.adapter, mode: 'static', address: '10.88.0.5', prefix: 24 }, mtk)
    expect(applied.body.resCode).toBe(1)
    const { changeId } = applied.body.resData
    expect(addresses()).toEqual(['10.88.0.5/24'])
    await device.kill()
    expect(addresses()).toEqual(['10.88.0.5/24'])

    device = restarted = await startDevice({ env, dataDir: device.dataDir })
    expect(await waitForAddresses(['10.77.0.2/24'], CONFIRM_MS + 3000)).toBe(true)
    mtk = await device.adminToken()
    for (const end = Date.now() + 2000; Date.now() < end; await sleep(100))
      if ((await device.post('/gtw/cwai/network/QueryChange', {}, mtk)).body.resData.pending === null) break
    const status = await device.post('/gtw/cwai/network/QueryChange', {}, mtk)
    expect(status.body.resData).toMatchObject({ pending: null, last: { changeId, outcome: 'rolled-back', reason: 'timeout' } })

    // confirmed over HTTP: it stays
    const kept = await device.post('/gtw/cwai/network/SetAdapter', { adapter: ns.adapter, mode: 'static', address: '10.88.0.7', prefix: 24 }, mtk)
    const confirmed = await device.post('/gtw/cwai/network/ConfirmChange', { changeId: kept.body.resData.changeId }, mtk)
    expect(confirmed.body).toMatchObject({ resCode: 1, resData: { outcome: 'confirmed' } })
    await sleep(CONFIRM_MS + 500)
    expect(addresses()).toEqual(['10.88.0.7/24'])
  })
})
