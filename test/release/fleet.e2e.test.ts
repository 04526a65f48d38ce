/**
 * Several devices on one broker (README "Several devices"): three device processes on loopback
 * and a real mosquitto, managed with `device-cli fleet ...` — list, a request to each through
 * the MQTT request transport (spec 5.6), an algorithm package to all, a device that goes away
 * and comes back, an upgrade of one confirmed by softwareVersion (spec 4.11).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import mqtt from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../runtime/cli/main.ts'
import { DeviceClient } from '../../runtime/client/client.ts'
import { md5Hex } from '../../runtime/client/md5.ts'
import { FileResumeStore, fileSource } from '../../runtime/client/node.ts'
import { uploadFile } from '../../runtime/client/upload.ts'
import { CHANGED_PASSWORD, freePort, startDevice, type DeviceProcess, type StartOptions } from '../helpers/device.ts'
import { startBroker, type Broker } from '../helpers/mosquitto.ts'
import { buildRelease } from '../helpers/release-package.ts'
import { zipOf } from '../helpers/zip.ts'

const root = path.resolve(import.meta.dirname, '../..')
const baseVersion = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version as string
const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
/** Each device's bootId as first seen (spec 4.11: a new one at each start of the device). */
const deviceBootIds = new Map<string, string>()
const IDS = ['fleet-a', 'fleet-b', 'fleet-c'] as const

describe('device-cli fleet commands: three devices on one mosquitto', () => {
  let broker: Broker
  let work: string
  const devices = new Map<string, DeviceProcess>()
  const options = (id: string): StartOptions => ({
    // fleet-a runs under the supervisor (npm start), which the upgrade needs.
    ...(id === 'fleet-a' ? { entry: 'supervisor' as const } : {}),
    env: { MQTT_URL: broker.url, MQTT_CLIENT_ID: id, MQTT_RECONNECT_MIN_MS: '100', UPGRADE_PROBATION_MS: '90000' },
  })

  async function cli(...argv: string[]) {
    const out: string[] = []
    const err: string[] = []
    const code = await runCli([...argv, '--state-dir', path.join(work, 'cli-state')], { out: (t) => out.push(t), err: (t) => err.push(t), env: { DEVICE_MQTT_URL: broker.url, DEVICE_PASSWORD: CHANGED_PASSWORD } })
    return { code, stdout: out.join('\n'), stderr: err.join('\n') }
  }
  const json = async (...argv: string[]) => {
    const result = await cli(...argv, '--json')
    return { ...result, body: JSON.parse(result.stdout || 'null') }
  }
  /** `fleet list` until `match` holds (registrations and statuses are retained and change as devices come and go). */
  async function listUntil(match: (rows: any[]) => boolean, what: string) {
    const until = Date.now() + 120_000
    for (;;) {
      const { body } = await json('fleet', 'list')
      if (match(body)) return body as any[]
      if (Date.now() > until) throw new Error(`fleet list never showed ${what}: ${JSON.stringify(body)}`)
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
  }
  const row = (rows: any[], id: string) => rows.find((r) => r.deviceId === id)
  const allOnline = (rows: any[]) => IDS.every((id) => row(rows, id)?.state === 'online' && row(rows, id).http.length > 0)

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'fleet-test-'))
    broker = await startBroker()
    for (const id of IDS) {
      const device = await startDevice(options(id))
      // Sets the password the CLI signs in with (the first one must be changed, spec 5.7).
      await device.adminToken()
      devices.set(id, device)
    }
    await listUntil(allOnline, 'three online devices')
  }, 300_000)
  afterAll(async () => {
    for (const device of devices.values()) {
      await device.stop()
      device.cleanup()
    }
    await broker?.cleanup()
    rmSync(work, { recursive: true, force: true })
  })

  it('lists the three devices from their retained registrations: online, version, HTTP address', async () => {
    const rows = await listUntil(allOnline, 'three online devices')
    expect(rows.map((r) => [r.deviceId, r.state, r.softwareVersion])).toEqual(IDS.map((id) => [id, 'online', baseVersion]))
    // HOST=127.0.0.1: the registration names exactly the bound address.
    for (const id of IDS) expect(row(rows, id).http).toEqual([devices.get(id)!.url])
    const table = await cli('fleet', 'list')
    expect(table.code).toBe(0)
    expect(table.stdout.split('\n')[0]).toMatch(/^device\s+state\s+softwareVersion\s+startedAt\s+http$/)
    expect(table.stdout).toContain(`fleet-b  online  ${baseVersion}`)
  })

  it('runs a route on each device through the MQTT request transport and reports per device', async () => {
    const all = await json('fleet', 'call', '/gtw/cwai/System/QueryDeviceStatus', '--all')
    expect(all.code).toBe(0)
    expect(all.body.map((r: any) => [r.deviceId, r.outcome, r.status])).toEqual(IDS.map((id) => [id, 'ok', 200]))
    for (const report of all.body) {
      const device = devices.get(report.deviceId)!
      // Each answer is that device's own: its data folder, its supervision, its own boot (spec 4.11), on the one boot of this machine.
      expect(report.envelope.resData).toMatchObject({ softwareVersion: baseVersion, osBootId: bootId, supervised: report.deviceId === 'fleet-a', storage: { path: device.dataDir } })
      deviceBootIds.set(report.deviceId, report.envelope.resData.bootId)
    }
    expect(new Set(deviceBootIds.values()).size).toBe(IDS.length)
    // The same validation as over HTTP: a bad body is refused by each device named.
    const refused = await json('fleet', 'call', '/v1/cwai/aihost/InterfaceTest', '--device', 'fleet-b,fleet-c', '--body', '{"echo": 5}')
    expect(refused.code).toBe(3)
    expect(refused.body.map((r: any) => [r.deviceId, r.outcome, r.status])).toEqual([['fleet-b', 'api.error.InvalidParam', 200], ['fleet-c', 'api.error.InvalidParam', 200]])
    const unknown = await json('fleet', 'call', '/v1/cwai/aihost/InterfaceTest', '--device', 'fleet-z')
    expect(unknown.code).toBe(4)
    expect(unknown.body).toMatchObject([{ deviceId: 'fleet-z', outcome: 'unknown-device', ok: false }])
  })

  it('installs an algorithm package on every device over HTTP and reports each', async () => {
    const manifest = { ...JSON.parse(readFileSync(path.join(root, 'models/manifests/face-detection.json'), 'utf8')), algorithmId: 'fleet-faces', algorithmName: 'Fleet faces' }
    const file = path.join(work, 'fleet-faces.zip')
    writeFileSync(file, await zipOf({ 'manifest.json': JSON.stringify(manifest) }))
    const pushed = await json('fleet', 'push-algorithm', file, '--all')
    expect(pushed.code).toBe(0)
    expect(pushed.body.map((r: any) => [r.deviceId, r.outcome, r.algorithms.map((a: any) => a.algorithmId)])).toEqual(IDS.map((id) => [id, 'installed', ['fleet-faces']]))
    const listed = await json('fleet', 'call', '/gtw/cwai/algorithm/layout/list', '--all', '--body', '{"origin":"package"}')
    expect(listed.body.map((r: any) => r.envelope.resData.rows.map((a: any) => a.algorithmId))).toEqual(IDS.map(() => ['fleet-faces']))
    // Installed already: each device refuses without --replace.
    const again = await json('fleet', 'push-algorithm', file, '--device', 'fleet-c')
    expect(again.code).toBe(3)
    expect(again.body).toMatchObject([{ deviceId: 'fleet-c', outcome: 'api.error.AlgorithmExists', ok: false, reached: true }])
  })

  it('a device that goes away is listed offline (its last will) and skipped; back, it answers again', async () => {
    const gone = devices.get('fleet-c')!
    const startedBefore = row(await listUntil(allOnline, 'three online devices'), 'fleet-c').startedAt
    const killedAt = Date.now()
    await gone.kill()
    await listUntil((rows) => row(rows, 'fleet-c')?.state === 'offline', 'fleet-c offline')
    // docs/deployment.md "Fleet view": a device that dies is offline once the broker misses its keep-alive (1.5 × 30 s).
    expect(Date.now() - killedAt).toBeLessThan(45_000 + 5000)
    const partial = await json('fleet', 'call', '/gtw/cwai/System/QueryDeviceStatus', '--all')
    expect(partial.code).toBe(4)
    expect(partial.body.map((r: any) => [r.deviceId, r.outcome])).toEqual([['fleet-a', 'ok'], ['fleet-b', 'ok'], ['fleet-c', 'offline']])

    devices.set('fleet-c', await startDevice({ ...options('fleet-c'), dataDir: gone.dataDir }))
    const rows = await listUntil((r) => allOnline(r) && row(r, 'fleet-c').startedAt !== startedBefore, 'fleet-c back')
    expect(row(rows, 'fleet-c').http).toEqual([devices.get('fleet-c')!.url])
    const back = await json('fleet', 'call', '/gtw/cwai/System/QueryDeviceStatus', '--device', 'fleet-c')
    expect(back.code).toBe(0)
    expect(back.body[0].envelope.resData).toMatchObject({ storage: { path: gone.dataDir } })
  }, 180_000)

  it('upgrades one device and confirms it by softwareVersion; an unsupervised one refuses and is reported so', async () => {
    const next = '9.8.7'
    const release = await buildRelease(work, next)
    const pushed = await json('fleet', 'push-upgrade', release.file, '--device', 'fleet-a,fleet-b')
    expect(pushed.code).toBe(3)
    expect(pushed.body[0]).toMatchObject({ deviceId: 'fleet-a', outcome: 'installed', ok: true, version: next, fromVersion: baseVersion, softwareVersion: next, reason: null })
    expect(pushed.body[1]).toMatchObject({ deviceId: 'fleet-b', outcome: 'api.error.upgradeNotSupervised', ok: false, reached: true })
    const rows = await listUntil((r) => allOnline(r) && row(r, 'fleet-a').softwareVersion === next, 'fleet-a upgraded')
    expect(rows.map((r) => [r.deviceId, r.softwareVersion])).toEqual([['fleet-a', next], ['fleet-b', baseVersion], ['fleet-c', baseVersion]])
    // The upgrade's restart is a boot of the device (spec 4.11): a new bootId; the OS did not reboot.
    const status = await json('fleet', 'call', '/gtw/cwai/System/QueryDeviceStatus', '--device', 'fleet-a')
    expect(status.body[0].envelope.resData).toMatchObject({ softwareVersion: next, osBootId: bootId, lastUpgrade: { version: next, outcome: 'installed' } })
    expect(status.body[0].envelope.resData.bootId).not.toBe(deviceBootIds.get('fleet-a'))
  }, 300_000)

  it('pushes an upgrade from another device\'s Fleet/push (as the console\'s Fleet view does): confirmed by softwareVersion, each refusal its own', async () => {
    const next = '9.8.8'
    const release = await buildRelease(work, next)
    // The package is uploaded to fleet-b by its own session, then fleet-b pushes it on.
    const b = devices.get('fleet-b')!
    const mtk = await b.adminToken()
    const client = new DeviceClient({ baseUrl: b.url })
    await client.login('admin', CHANGED_PASSWORD)
    const source = await fileSource(release.file)
    const { uploadId } = await uploadFile(client, source, { purpose: 'upgrade', resumeKey: 'fleet-push-upgrade', store: new FileResumeStore(path.join(work, 'push-state')) })
    const started = await b.post('/gtw/cwai/Fleet/push', { uploadId, kind: 'upgrade', deviceIds: ['fleet-a', 'fleet-b', 'fleet-c'], account: 'admin', pwd: md5Hex(CHANGED_PASSWORD) }, mtk)
    expect(started.body.resCode).toBe(1)
    expect(started.body.resData).toMatchObject({ kind: 'upgrade', fileName: path.basename(release.file), size: source.size, finishedAt: null })
    // The same upload is consumed once (spec 3.1).
    expect((await b.post('/gtw/cwai/Fleet/push', { uploadId, kind: 'upgrade', deviceIds: ['fleet-a'], account: 'admin', pwd: md5Hex(CHANGED_PASSWORD) }, mtk)).body.resMsg[0].messageKey).toBe('api.error.uploadConsumed')
    const phases = new Set<string>()
    let push: any
    for (const until = Date.now() + 240_000; ;) {
      push = (await b.post('/gtw/cwai/Fleet/pushStatus', { pushId: started.body.resData.pushId }, mtk)).body.resData
      phases.add(push.rows[0].phase)
      if (push.finishedAt || Date.now() > until) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(push.finishedAt).not.toBeNull()
    expect(push.rows.map((r: any) => [r.deviceId, r.phase, r.ok, r.outcome])).toEqual([
      ['fleet-a', 'done', true, 'installed'],
      // The device the push runs on would end it by restarting: it is not upgraded this way.
      ['fleet-b', 'failed', false, 'self-upgrade'],
      // fleet-c runs unsupervised: its own refusal, with its text.
      ['fleet-c', 'failed', false, 'api.error.upgradeNotSupervised'],
    ])
    expect(push.rows[0]).toMatchObject({ percent: 100, detail: `9.8.7 → ${next}` })
    expect(push.rows[2].error).toMatchObject({ messageKey: 'api.error.upgradeNotSupervised', httpStatus: 200 })
    expect(push.rows[2].error.msgText.length).toBeGreaterThan(10)
    // The phases the upgrade went through on fleet-a, as polled (installing and restarting last seconds each).
    expect(phases.has('restarting')).toBe(true)
    const rows = await listUntil((r) => allOnline(r) && row(r, 'fleet-a').softwareVersion === next, 'fleet-a upgraded again')
    expect(rows.map((r) => [r.deviceId, r.softwareVersion])).toEqual([['fleet-a', next], ['fleet-b', baseVersion], ['fleet-c', baseVersion]])
  }, 300_000)
})

describe('device-cli fleet on a broker with users and the README ACL: the broker is the access control (spec 5.6)', () => {
  const users = { operator: 'operator-Passw0rd', 'cam-1': 'cam-1-Passw0rd', 'cam-2': 'cam-2-Passw0rd' }
  let broker: Broker
  let device: DeviceProcess
  const run = async (user: keyof typeof users, password: string, ...argv: string[]) => {
    const out: string[] = []
    const err: string[] = []
    const code = await runCli([...argv, '--broker', broker.url, '--broker-username', user, '--json'], { out: (t) => out.push(t), err: (t) => err.push(t), env: { DEVICE_MQTT_PASSWORD: password } })
    return { code, stdout: out.join('\n'), stderr: err.join('\n') }
  }
  const status = (user: keyof typeof users, password = users[user]) => run(user, password, 'fleet', 'call', '/gtw/cwai/System/QueryDeviceStatus', '--device', 'cam-1', '--timeout', '3')

  beforeAll(async () => {
    broker = await startBroker({ users, acl: ['pattern readwrite cwai/%c/#', 'user operator', 'topic write cwai/+/request', 'topic read cwai/#'] })
    device = await startDevice({ env: { MQTT_URL: broker.url, MQTT_CLIENT_ID: 'cam-1', MQTT_USERNAME: 'cam-1', MQTT_PASSWORD: users['cam-1'] } })
    const until = Date.now() + 60_000
    while (JSON.parse((await run('operator', users.operator, 'fleet', 'list')).stdout || '[]')[0]?.state !== 'online') {
      if (Date.now() > until) throw new Error('cam-1 never registered')
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
  }, 120_000)
  afterAll(async () => {
    await device?.stop()
    device?.cleanup()
    await broker?.cleanup()
  })

  it('the operator runs a route on the device', async () => {
    const answer = await status('operator')
    expect(answer.code).toBe(0)
    expect(JSON.parse(answer.stdout)[0]).toMatchObject({ deviceId: 'cam-1', outcome: 'ok', envelope: { resData: { storage: { path: device.dataDir } } } })
  })

  it('another device\'s user can neither see the fleet nor run a request on a device', async () => {
    expect(JSON.parse((await run('cam-2', users['cam-2'], 'fleet', 'list')).stdout)).toEqual([])
    const refused = await status('cam-2')
    expect(refused.code).toBe(4)
    expect(JSON.parse(refused.stdout)).toMatchObject([{ deviceId: 'cam-1', outcome: 'unknown-device' }])
    // Published straight to the device's request topic, the request is dropped by the broker:
    // the operator's requests sent after it are answered, it never is.
    const answered: string[] = []
    const watcher = await mqtt.connectAsync(broker.url, { username: 'operator', password: users.operator })
    const intruder = await mqtt.connectAsync(broker.url, { clientId: 'cam-2', username: 'cam-2', password: users['cam-2'] })
    try {
      watcher.on('message', (_topic, payload) => answered.push(JSON.parse(payload.toString()).requestId))
      await watcher.subscribeAsync('cwai/cam-1/response', { qos: 1 })
      await intruder.publishAsync('cwai/cam-1/request', JSON.stringify({ requestId: 'intruder-1', path: '/gtw/cwai/System/QueryDeviceStatus', body: {} }), { qos: 1 })
      for (let i = 0; i < 2; i++) expect((await status('operator')).code).toBe(0)
      const until = Date.now() + 10_000
      while (answered.length < 2 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50))
      expect(answered).toHaveLength(2)
      expect(answered.every((id) => id.startsWith('cli-'))).toBe(true)
    } finally {
      await Promise.all([watcher.endAsync(true), intruder.endAsync(true)])
    }
  })

  it('a wrong broker password is refused by the broker (exit 4) and never printed', async () => {
    const answer = await status('operator', 'Wr0ng-broker-pw')
    expect(answer.code).toBe(4)
    expect(JSON.parse(answer.stderr)).toMatchObject({ error: { kind: 'network', message: expect.stringMatching(/^cannot reach the broker at mqtt:\/\/127\.0\.0\.1:\d+\/?: Connection refused: Not authorized$/) }, exitCode: 4 })
    expect(answer.stdout + answer.stderr).not.toContain('Wr0ng-broker-pw')
  })
})

describe('device-cli fleet usage and broker errors', () => {
  const run = async (argv: string[], env: Record<string, string> = {}) => {
    const out: string[] = []
    const err: string[] = []
    const code = await runCli(argv, { out: (t) => out.push(t), err: (t) => err.push(t), env })
    return { code, stdout: out.join('\n'), stderr: err.join('\n') }
  }

  it.each([
    [['fleet'], /fleet needs a command: list, call, push-upgrade, push-algorithm/],
    [['fleet', 'frobnicate'], /unknown fleet command "frobnicate"/],
    [['fleet', 'list'], /a broker is needed: --broker or DEVICE_MQTT_URL/],
    [['fleet', 'list', '--broker', 'http://127.0.0.1:1883'], /--broker must be an mqtt/],
    [['fleet', 'call', '/x', '--broker', 'mqtt://127.0.0.1:1'], /needs either --device <id>\[,<id>...\] or --all/],
    [['fleet', 'call', 'x', '--all', '--broker', 'mqtt://127.0.0.1:1'], /the route path must start with \//],
    [['fleet', 'call', '/x', '--all', '--body', '{', '--broker', 'mqtt://127.0.0.1:1'], /--body is not JSON/],
    [['fleet', 'push-upgrade', '/nonexistent/pkg.tar.gz', '--all', '--password', 'x', '--broker', 'mqtt://127.0.0.1:1'], /cannot read \/nonexistent\/pkg\.tar\.gz/],
    [['fleet', 'push-upgrade', 'pkg.tar.gz', '--all', '--broker', 'mqtt://127.0.0.1:1'], /a password is needed to sign in on each device/],
    [['fleet', 'list', '--timeout', '0', '--broker', 'mqtt://127.0.0.1:1'], /--timeout must be a positive integer/],
  ])('%j is a usage error (exit 2), found before the broker is contacted', async (argv, message) => {
    const result = await run(argv as string[])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(message as RegExp)
  })

  it('an unreachable broker is a network error (exit 4) that never shows the broker password', async () => {
    const port = await freePort()
    const result = await run(['fleet', 'list', '--broker', `mqtt://operator:s3cret-pw@127.0.0.1:${port}`, '--broker-password', 'an0ther-secret'])
    expect(result.code).toBe(4)
    expect(result.stderr).toMatch(new RegExp(`cannot reach the broker at mqtt://operator:\\*\\*\\*@127\\.0\\.0\\.1:${port}`))
    expect(result.stderr + result.stdout).not.toMatch(/s3cret-pw|an0ther-secret/)
  })
})
