/**
 * Factory reset (README "Backup, restore and factory reset"): the two steps and their refusals
 * on real services with an injected clock, then the start-up wipe on a real data folder.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runPendingFactoryReset } from '../../runtime/backup/factory-reset.ts'
import { factoryResetMarker } from '../../runtime/backup/records.ts'
import type { Identity } from '../../shared/handler.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'

const TTL_MS = 60_000
const identity = (sessionId: string): Identity => ({ userId: 'u1', accountName: 'admin', sessionId, transport: 'http', passwordChangeRequired: false })
const refusal = (work: () => unknown) => Promise.resolve().then(work).then(() => null, (error) => error.item)

describe('factory reset', () => {
  let rt: TestRuntime
  const previous = process.env.DEVICE_SUPERVISED
  beforeAll(async () => {
    // The device host reads it when it is built: this runtime behaves as one the supervisor runs.
    process.env.DEVICE_SUPERVISED = '1'
    rt = await createTestRuntime({ factoryResetTokenTtlMs: TTL_MS })
  })
  afterAll(async () => {
    if (previous === undefined) delete process.env.DEVICE_SUPERVISED
    else process.env.DEVICE_SUPERVISED = previous
    await rt?.close()
  })
  afterEach(() => expect(existsSync(factoryResetMarker(rt.config.dataPath))).toBe(false))

  const backup = () => rt.runtime.services.backup

  it('step 1 answers a token and its lifetime and changes nothing', () => {
    const challenge = backup().requestFactoryReset(identity('s1'))
    expect(challenge.confirmationToken).toMatch(/^[0-9a-f]{32}$/)
    expect(challenge).toMatchObject({ expiresAt: String(rt.clock.now() + TTL_MS), expiresInSeconds: 60 })
  })

  it('refuses a wrong token, a token of another session, an expired token, a token used twice', async () => {
    expect(await refusal(() => backup().factoryReset('0'.repeat(32), identity('s1')))).toMatchObject({ messageKey: 'api.error.FactoryResetTokenInvalid', msgCode: '8164' })
    const { confirmationToken } = backup().requestFactoryReset(identity('s1'))
    expect(await refusal(() => backup().factoryReset(confirmationToken, identity('s2')))).toMatchObject({ messageKey: 'api.error.FactoryResetTokenInvalid' })
    const late = backup().requestFactoryReset(identity('s1'))
    rt.clock.advance(TTL_MS)
    expect(await refusal(() => backup().factoryReset(late.confirmationToken, identity('s1')))).toMatchObject({ messageKey: 'api.error.FactoryResetTokenExpired', msgCode: '8165', details: { ttlMs: TTL_MS } })
    expect(await refusal(() => backup().factoryReset(late.confirmationToken, identity('s1')))).toMatchObject({ messageKey: 'api.error.FactoryResetTokenInvalid' })
  })

  it('with a valid token it stages the reset, after which nothing else is started; the start-up wipe keeps only the software', async () => {
    const data = rt.config.dataPath
    for (const folder of ['releases/1.2.3', 'upgrade', 'algorithm-packages/a', 'models', 'cameras', 'uploads', 'pictures', 'logs']) mkdirSync(path.join(data, folder), { recursive: true })
    writeFileSync(path.join(data, 'releases', '1.2.3', 'server.mjs'), 'software')
    writeFileSync(path.join(data, 'upgrade', 'state.json'), '{}')
    writeFileSync(path.join(data, 'models', 'm.onnx'), 'model')
    const { confirmationToken } = backup().requestFactoryReset(identity('s1'))
    expect(await backup().factoryReset(confirmationToken, identity('s1'))).toEqual({ resetting: true })
    expect(existsSync(factoryResetMarker(data))).toBe(true)
    expect(await refusal(() => backup().requestFactoryReset(identity('s1')))).toMatchObject({ messageKey: 'api.error.SystemChangePending' })
    expect(await refusal(() => backup().create('passphrase-1', identity('s1')))).toMatchObject({ messageKey: 'api.error.SystemChangePending' })
    expect(readdirSync(data)).toContain('device.db')

    expect(await runPendingFactoryReset(rt.config)).toMatchObject({ requestedBy: 'admin', requestedAt: rt.clock.now() })
    expect(readdirSync(data).sort()).toEqual(['releases', 'upgrade'])
    expect(readdirSync(path.join(data, 'releases', '1.2.3'))).toEqual(['server.mjs'])
    // Nothing to do at the next start.
    expect(await runPendingFactoryReset(rt.config)).toBeNull()
  })
})

describe('factory reset and restore need the supervisor', () => {
  it('an unsupervised device refuses both before anything changes', async () => {
    const previous = process.env.DEVICE_SUPERVISED
    delete process.env.DEVICE_SUPERVISED
    const rt = await createTestRuntime()
    try {
      const who = identity('s1')
      expect(await refusal(() => rt.runtime.services.backup.requestFactoryReset(who))).toMatchObject({ messageKey: 'api.error.RestartNotSupervised', msgCode: '8162' })
      expect(await refusal(() => rt.runtime.services.backup.factoryReset('x', who))).toMatchObject({ messageKey: 'api.error.RestartNotSupervised' })
      expect(await refusal(() => rt.runtime.services.backup.restore('no-such-upload', 'passphrase-1', who))).toMatchObject({ messageKey: 'api.error.RestartNotSupervised' })
    } finally {
      if (previous !== undefined) process.env.DEVICE_SUPERVISED = previous
      await rt.close()
    }
  })
})
