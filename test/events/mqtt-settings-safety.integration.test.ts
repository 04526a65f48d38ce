import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { freePort, startDevice, type DeviceProcess } from '../helpers/device.ts'

/** A CA and a client certificate signed by it, with keys, made by openssl for this test. */
function makeTlsFiles(dir: string) {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' })
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=test-ca')
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/CN=device')
  run('x509', '-req', '-in', 'client.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'client.pem', '-days', '2')
  run('genpkey', '-algorithm', 'RSA', '-out', 'other.key')
  return { ca: path.join(dir, 'ca.pem'), cert: path.join(dir, 'client.pem'), key: path.join(dir, 'client.key'), otherKey: path.join(dir, 'other.key') }
}

test.describe('MQTT settings never take the device down', () => {
  let device: DeviceProcess
  let mtk: string
  /** The file's device started again on its data folder (the second test). */
  let restarted: DeviceProcess | undefined
  let dir: string
  let tls: ReturnType<typeof makeTlsFiles>
  let closedPort: number
  const setMqtt = (body: Record<string, unknown>) => device.post('/gtw/cwai/System/SetMqttParam', body, mtk)
  const queryMqtt = async () => (await device.post('/gtw/cwai/System/QueryMqttParam', {}, mtk)).body.resData

  test.beforeAll(async ({ device: started, mtk: session }) => {
    dir = mkdtempSync(path.join(tmpdir(), 'mqtt-tls-'))
    tls = makeTlsFiles(dir)
    closedPort = await freePort()
    device = started
    mtk = session
  })
  // The restarted device stops before the fixture removes the data folder they share.
  test.afterAll(async () => {
    await restarted?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  test('refuses TLS files that are not TLS material, naming the field, and stores nothing', async () => {
    const before = await queryMqtt()
    const cases: [Record<string, unknown>, string][] = [
      [{ caFile: '/etc/passwd', certFile: '/etc/passwd', keyFile: '/etc/passwd' }, '/caFile'],
      [{ caFile: tls.ca, certFile: '/etc/passwd', keyFile: tls.key }, '/certFile'],
      [{ caFile: tls.ca, certFile: tls.cert, keyFile: '/etc/passwd' }, '/keyFile'],
      [{ caFile: tls.ca, certFile: tls.cert, keyFile: tls.otherKey }, '/keyFile'],
      [{ caFile: tls.ca, certFile: tls.cert }, '/keyFile'],
      [{ caFile: path.join(dir, 'missing.pem') }, '/caFile'],
      [{ caFile: dir }, '/caFile'],
      [{ caFile: '/etc/hostname' }, '/caFile'],
      [{ caFile: '/nonexistent/ca.pem' }, '/caFile'],
    ]
    // Enabled or not, the same refusal: enabling later must not fail on something accepted now.
    for (const enabled of [true, false]) {
      for (const [files, field] of cases) {
        const answer = await setMqtt({ enabled, url: `mqtts://127.0.0.1:${closedPort}`, ...files })
        expect(answer.body.resCode).toBe(0)
        expect(answer.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field } })
        expect(await queryMqtt()).toEqual(before)
      }
    }
  })

  test('a stored setting that no longer works at start is reported and left out; the device starts', async () => {
    const set = await setMqtt({ enabled: true, url: `mqtts://127.0.0.1:${closedPort}`, caFile: tls.ca, certFile: tls.cert, keyFile: tls.key })
    expect(set.body.resCode).toBe(1)
    expect((await queryMqtt()).caFile).toBe(tls.ca)
    // The certificate file is replaced by something that is not a certificate while the device is off.
    await device.stop()
    writeFileSync(tls.cert, '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n')
    device = restarted = await startDevice({ dataDir: device.dataDir })
    mtk = await device.adminToken()
    expect((await device.post('/v1/cwai/aihost/Probe', {})).body.resData.alive).toBe(true)
    const status = (await device.post('/gtw/cwai/System/QueryEventChannelStatus', {}, mtk)).body.resData
    expect(status.mqtt.state).toBe('rejected')
    expect(status.mqtt.lastError).toContain('/certFile')
    const events = (await device.post('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 10, kinds: ['settings.rejected'] }, mtk)).body.resData
    expect(events.rows.map((e: { payload: { setting: string } }) => e.payload.setting)).toEqual(['mqtt'])
    // The stored settings are still there for the operator to correct.
    expect((await queryMqtt()).certFile).toBe(tls.cert)
    expect((await setMqtt({ enabled: false })).body.resCode).toBe(1)
    expect((await device.post('/gtw/cwai/System/QueryEventChannelStatus', {}, mtk)).body.resData.mqtt.state).toBe('disabled')
  })

  test('a disabled stored setting whose file no longer works (an older database) starts disabled; enabling it is refused naming the file', async () => {
    // Stored as the previous test left it: enabled false, certFile no longer a certificate.
    await device.stop()
    device = restarted = await startDevice({ dataDir: device.dataDir })
    mtk = await device.adminToken()
    expect((await device.post('/v1/cwai/aihost/Probe', {})).body.resData.alive).toBe(true)
    const status = async () => (await device.post('/gtw/cwai/System/QueryEventChannelStatus', {}, mtk)).body.resData.mqtt
    expect(await status()).toEqual({ state: 'disabled', lastError: null, deliveredId: 0 })
    // Nothing was applied at this start: the one settings.rejected event is the previous start's.
    const rejected = async () => (await device.post('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 10, kinds: ['settings.rejected'] }, mtk)).body.resData.total
    expect(await rejected()).toBe(1)
    const before = await queryMqtt()
    for (const patch of [{ enabled: true }, { topicPrefix: 'elsewhere' }]) {
      const answer = await setMqtt(patch)
      expect(answer.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/certFile' } })
      expect(await queryMqtt()).toEqual(before)
    }
    // Switching off always works; replacing the file makes the settings usable again.
    expect((await setMqtt({ enabled: false })).body.resCode).toBe(1)
    const fixed = await setMqtt({ certFile: '', keyFile: '', topicPrefix: 'elsewhere' })
    expect(fixed.body.resCode).toBe(1)
    expect(fixed.body.resData).toMatchObject({ enabled: false, certFile: '', keyFile: '', caFile: tls.ca, topicPrefix: 'elsewhere' })
    expect(await status()).toEqual({ state: 'disabled', lastError: null, deliveredId: 0 })
  })
})
