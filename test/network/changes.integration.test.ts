import { readFileSync } from 'node:fs'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import ConfirmChange from '../../functions/network/ConfirmChange.ts'
import QueryChange from '../../functions/network/QueryChange.ts'
import RevertChange from '../../functions/network/RevertChange.ts'
import SetAdapter from '../../functions/network/SetAdapter.ts'
import { createLogger } from '../../runtime/log.ts'
import { HostNetworkService } from '../../runtime/network/service.ts'
import { events } from '../../shared/db/schema/index.ts'
import type { Identity } from '../../shared/handler.ts'
import { AdapterChange } from '../../shared/network/schemas.ts'
import { validateInput } from '../../shared/schema/validate.ts'
import { createNamespace, isRoot, type TestNamespace } from '../helpers/netns.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'

const CONFIRM_MS = 1000
const admin: Identity = { userId: 'u1', accountName: 'admin', sessionId: 's1', transport: 'http', passwordChangeRequired: false }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// The apply/confirm/rollback path on a veth adapter inside a namespace the test creates and
// removes: the host's own network is never touched (iproute2-runtime backend).
describe.runIf(isRoot())('network changes with confirm-or-rollback (spec 4.10 Network)', () => {
  let ns: TestNamespace
  let t: TestRuntime
  const resolvConf = () => readFileSync(`/etc/netns/${ns.name}/resolv.conf`, 'utf8')
  const state = () => ({
    addresses: ((JSON.parse(ns.ip('-json', '-4', 'addr', 'show', 'dev', ns.adapter))[0]?.addr_info ?? []) as { local: string; prefixlen: number }[]).map((a) => `${a.local}/${a.prefixlen}`),
    gateways: (JSON.parse(ns.ip('-json', '-4', 'route', 'show', 'default')) as { gateway: string; dev: string }[]).map((r) => `${r.gateway} ${r.dev}`),
    resolvConf: resolvConf(),
  })
  const ORIGINAL = () => ({ addresses: ['10.77.0.2/24'], gateways: [`10.77.0.1 ${ns.adapter}`], resolvConf: 'nameserver 10.77.0.53\n' })
  const NEW: Omit<AdapterChange, 'adapter'> = { mode: 'static', address: '10.88.0.5', prefix: 24, gateway: '10.88.0.1', dns: ['10.88.0.53'], searchDomains: ['new.example'] }
  const NEW_STATE = () => ({ addresses: ['10.88.0.5/24'], gateways: [`10.88.0.1 ${ns.adapter}`], resolvConf: '# written by the device (network settings)\nsearch new.example\nnameserver 10.88.0.53\n' })
  // the outcome is stored once the restore is complete
  const settled = async (network = t.runtime.services.network, ms = 3000) => {
    for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if ((await network.changeStatus()).pending === null) return true
    return false
  }
  const emitted = async () => (await t.runtime.services.db.select().from(events)).filter((e) => e.kind.startsWith('network.')).map((e) => ({ kind: e.kind, ...JSON.parse(e.payload) }))

  beforeAll(async () => {
    ns = createNamespace()
    t = await createTestRuntime({ networkNamespace: ns.name, networkBackend: 'iproute2-runtime', networkConfirmTimeoutMs: CONFIRM_MS })
  })
  afterAll(async () => {
    await t?.close()
    ns?.remove()
  })
  beforeEach(async () => {
    const { pending } = await QueryChange.handle({}, t.ctx())
    if (pending) await RevertChange.handle({ changeId: pending.changeId }, t.ctx())
    ns.ip('-4', 'addr', 'flush', 'dev', ns.adapter)
    ns.ip('addr', 'add', '10.77.0.2/24', 'dev', ns.adapter)
    ns.ip('route', 'replace', 'default', 'via', '10.77.0.1', 'dev', ns.adapter)
    ns.writeResolvConf('nameserver 10.77.0.53\n')
  })

  it('applies the change, and without a confirmation the previous configuration comes back by itself', async () => {
    expect(state()).toEqual(ORIGINAL())
    const before = Date.now()
    const pending = await SetAdapter.handle({ adapter: ns.adapter, ...NEW }, t.ctx(admin))
    expect(pending).toMatchObject({ adapter: ns.adapter, backend: 'iproute2-runtime', config: NEW, requestedBy: 'admin', confirmBy: pending.appliedAt + CONFIRM_MS })
    expect(pending).not.toHaveProperty('snapshot')
    expect(state()).toEqual(NEW_STATE())
    expect((await QueryChange.handle({}, t.ctx())).pending).toEqual(pending)
    // a second change waits for the first
    await expect(SetAdapter.handle({ adapter: ns.adapter, ...NEW, address: '10.88.0.6' }, t.ctx(admin)))
      .rejects.toMatchObject({ item: { messageKey: 'api.error.NetworkChangePending', details: { changeId: pending.changeId } } })

    await sleep(CONFIRM_MS / 4)
    expect(state()).toEqual(NEW_STATE())
    expect(await settled()).toBe(true)
    expect(Date.now() - before).toBeGreaterThanOrEqual(CONFIRM_MS - 20)
    expect(state()).toEqual(ORIGINAL())
    const status = await QueryChange.handle({}, t.ctx())
    expect(status).toEqual({ pending: null, last: { changeId: pending.changeId, adapter: ns.adapter, backend: 'iproute2-runtime', outcome: 'rolled-back', reason: 'timeout', at: expect.any(Number) }, now: t.clock.now() })
    await expect(ConfirmChange.handle({ changeId: pending.changeId }, t.ctx()))
      .rejects.toMatchObject({ item: { messageKey: 'api.error.NetworkChangeNotFound' } })
    expect(await emitted()).toEqual(expect.arrayContaining([
      { kind: 'network.changed', changeId: pending.changeId, adapter: ns.adapter, backend: 'iproute2-runtime', outcome: 'applied', requestedBy: 'admin' },
      { kind: 'network.rolledBack', changeId: pending.changeId, adapter: ns.adapter, backend: 'iproute2-runtime', reason: 'timeout' },
    ]))
  })

  it('keeps a confirmed change past the timeout', async () => {
    const pending = await SetAdapter.handle({ adapter: ns.adapter, ...NEW }, t.ctx(admin))
    expect(await ConfirmChange.handle({ changeId: pending.changeId }, t.ctx())).toMatchObject({ changeId: pending.changeId, outcome: 'confirmed', reason: null })
    await sleep(CONFIRM_MS + 500)
    expect(state()).toEqual(NEW_STATE())
    expect(await QueryChange.handle({}, t.ctx())).toMatchObject({ pending: null, last: { changeId: pending.changeId, outcome: 'confirmed' } })
  })

  it('refuses a confirmation through the address the change gives up (still pending), and takes one through the new address', async () => {
    const through = (localAddress: string | null) => ({ ...t.ctx(admin), localAddress })
    const pending = await SetAdapter.handle({ adapter: ns.adapter, ...NEW, confirmTimeoutSeconds: 600 }, t.ctx(admin))
    expect(pending.previousAddresses).toEqual(['10.77.0.2'])
    expect(state()).toEqual(NEW_STATE())
    await expect(ConfirmChange.handle({ changeId: pending.changeId }, through('10.77.0.2'))).rejects.toMatchObject({ item: {
      msgCode: '8006', messageKey: 'api.error.NetworkConfirmFromOldAddress', recommendedAction: 'CONFIRM_AT_NEW_ADDRESS',
      msgText: expect.stringContaining('open the device at 10.88.0.5 and confirm there'),
      details: { changeId: pending.changeId, adapter: ns.adapter, through: '10.77.0.2', confirmAt: ['10.88.0.5'], confirmBy: pending.confirmBy },
    } })
    expect(await QueryChange.handle({}, t.ctx())).toMatchObject({ pending })
    expect(state()).toEqual(NEW_STATE())
    expect(await ConfirmChange.handle({ changeId: pending.changeId }, through('10.88.0.5'))).toMatchObject({ changeId: pending.changeId, outcome: 'confirmed' })
    expect(await QueryChange.handle({}, t.ctx())).toMatchObject({ pending: null, last: { changeId: pending.changeId, outcome: 'confirmed' } })
    expect(state()).toEqual(NEW_STATE())
  })

  it('takes a confirmation through an address the change keeps, the loopback or another adapter, and over a transport without one', async () => {
    const through = (localAddress: string | null) => ({ ...t.ctx(admin), localAddress })
    // the same address with another gateway: the address the console uses stays
    const kept = await SetAdapter.handle({ adapter: ns.adapter, mode: 'static', address: '10.77.0.2', prefix: 24, gateway: '10.77.0.254', confirmTimeoutSeconds: 600 }, t.ctx(admin))
    expect(await ConfirmChange.handle({ changeId: kept.changeId }, through('10.77.0.2'))).toMatchObject({ outcome: 'confirmed' })
    for (const localAddress of ['127.0.0.1', '192.0.2.10', '::1', null]) {
      const moved = await SetAdapter.handle({ adapter: ns.adapter, mode: 'static', address: '10.77.0.3', prefix: 24, confirmTimeoutSeconds: 600 }, t.ctx(admin))
      expect(await ConfirmChange.handle({ changeId: moved.changeId }, through(localAddress)), String(localAddress)).toMatchObject({ outcome: 'confirmed' })
      ns.ip('-4', 'addr', 'flush', 'dev', ns.adapter)
      ns.ip('addr', 'add', '10.77.0.2/24', 'dev', ns.adapter)
    }
  })

  it('reverts at once on request', async () => {
    const pending = await SetAdapter.handle({ adapter: ns.adapter, ...NEW, confirmTimeoutSeconds: 600 }, t.ctx(admin))
    expect(pending.confirmBy).toBe(pending.appliedAt + 600_000)
    expect(state()).toEqual(NEW_STATE())
    expect(await RevertChange.handle({ changeId: pending.changeId }, t.ctx())).toMatchObject({ outcome: 'rolled-back', reason: 'reverted' })
    expect(state()).toEqual(ORIGINAL())
  })

  it('refuses invalid changes with the field named, and changes nothing', async () => {
    const refused = async (change: Record<string, unknown>, field: string) => {
      await expect(Promise.resolve().then(() => SetAdapter.handle(validateInput(AdapterChange, { adapter: ns.adapter, ...change }), t.ctx(admin))))
        .rejects.toMatchObject({ item: { messageKey: 'api.error.InvalidParam', details: { field } } })
      expect(state()).toEqual(ORIGINAL())
    }
    await refused({ mode: 'static', address: '10.88.0.5', prefix: 24, gateway: '10.89.0.1' }, '/gateway')
    await refused({ mode: 'static', address: '10.88.0.5', prefix: 33 }, '/prefix')
    await refused({ mode: 'static', address: '10.88.0.5', prefix: 31 }, '/prefix')
    await refused({ mode: 'static', address: '10.88.0.0', prefix: 24 }, '/address')
    await refused({ mode: 'static', address: '10.88.0.255', prefix: 24 }, '/address')
    await refused({ mode: 'static', address: '10.88.0.300', prefix: 24 }, '/address')
    await refused({ mode: 'static', address: '10.88.0.5', prefix: 24, gateway: '10.88.0.5' }, '/gateway')
    await refused({ mode: 'static', prefix: 24 }, '/address')
    await refused({ mode: 'static', address: '10.88.0.5', prefix: 24, dns: ['not-an-ip'] }, '/dns/0')
    await refused({ mode: 'dhcp', address: '10.88.0.5' }, '/address')
    await refused({ adapter: 'nosuch0', mode: 'static', address: '10.88.0.5', prefix: 24 }, '/adapter')
    await refused({ adapter: 'lo', mode: 'static', address: '10.88.0.5', prefix: 24 }, '/adapter')
    expect((await QueryChange.handle({}, t.ctx())).pending).toBeNull()
  })

  it('refuses DHCP on the runtime backend (no DHCP client) and leaves the adapter as it was', async () => {
    await expect(SetAdapter.handle({ adapter: ns.adapter, mode: 'dhcp' }, t.ctx(admin)))
      .rejects.toMatchObject({ item: { messageKey: 'api.error.NotSupported', details: { backend: 'iproute2-runtime', mode: 'dhcp' } } })
    expect(state()).toEqual(ORIGINAL())
    expect(await QueryChange.handle({}, t.ctx())).toMatchObject({ pending: null, last: { outcome: 'rolled-back', reason: 'apply failed' } })
  })

  it('rolls back after a restart in the confirm window, at the original deadline', async () => {
    const pending = await SetAdapter.handle({ adapter: ns.adapter, ...NEW }, t.ctx(admin))
    // the device stops half-way through the window: its timer goes, the pending change stays stored
    await t.runtime.components.find((c) => c.name === 'network')!.stop!()
    t.clock.advance(CONFIRM_MS * 0.75)
    const log = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }))
    const restarted = new HostNetworkService({
      db: t.runtime.services.db, now: () => t.clock.now(), events: t.runtime.services.events, log,
      namespace: ns.name, backend: 'iproute2-runtime', confirmTimeoutMs: CONFIRM_MS,
    })
    const started = Date.now()
    await restarted.start()
    expect((await restarted.changeStatus()).pending).toEqual(pending)
    expect(state()).toEqual(NEW_STATE())
    // the next run rolls back when the rest of the window (a quarter) has passed, not a whole new window
    expect(await settled(restarted)).toBe(true)
    expect(Date.now() - started).toBeGreaterThanOrEqual(CONFIRM_MS / 4 - 20)
    expect(Date.now() - started).toBeLessThan(CONFIRM_MS)
    expect(state()).toEqual(ORIGINAL())
    expect(await restarted.changeStatus()).toMatchObject({ pending: null, last: { changeId: pending.changeId, outcome: 'rolled-back', reason: 'timeout' } })
    restarted.stop()
  })
})
