import { afterEach, describe, expect, it } from 'vitest'
import { AlarmActions } from '../../runtime/alarms/actions.ts'
import { verifyWebhook } from '../../runtime/events/webhook-signature.ts'
import { createLogger } from '../../runtime/log.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { DeviceEvent } from '../../shared/events/types.ts'
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts'
import { until } from '../helpers/processes.ts'

const alarm: DeviceEvent = { id: 41, kind: 'alarm.raised', time: '2026-03-02T08:00:00.000Z', source: 'analysis', payload: { alarmId: 'a-1', policyId: 'p-1', objectId: '3' } }

/** The actions with the events they emit and the publishes and plays they make recorded. */
function actions(options: { publish?: (topic: string, payload: string) => Promise<void>; play?: () => Promise<never> } = {}) {
  const emitted: { kind: string; payload: Record<string, unknown> }[] = []
  const published: [string, string][] = []
  const played: { columnId: string; audioId: string }[] = []
  const subject = new AlarmActions({
    log: createLogger('silent'),
    events: { emit: async (kind, payload) => { emitted.push({ kind, payload }); return 99 } },
    publish: options.publish ?? (async (topic, payload) => { published.push([topic, payload]) }),
    audio: { playOnColumn: async (request) => { played.push({ columnId: request.columnId, audioId: request.audioId }); return options.play ? options.play() : ({} as never) } },
  })
  return { subject, emitted, published, played }
}

describe('alarm actions (spec 4.10 Linkage / alarm policy)', () => {
  let receiver: Receiver | null = null
  afterEach(async () => { await receiver?.close(); receiver = null })

  it('posts the alarm event signed with the action\'s secret, again after a failed attempt; publishes it and plays the sound', async () => {
    receiver = await startReceiver()
    receiver.respond = (_body, attempt) => (attempt === 1 ? 503 : 200)
    const { subject, emitted, published, played } = actions()
    subject.dispatch(alarm, [
      { type: 'webhook', url: receiver.url, secret: 'k' }, { type: 'mqtt', topic: 'site/alarms' },
      { type: 'clip', preRollS: 1, postRollS: 1 }, { type: 'audio', columnId: 'col', audioId: 'bell' },
    ], 'p-1')
    const delivered = await receiver.waitFor((d) => d.status === 200, 10_000)
    expect(receiver.deliveries.map((d) => d.status)).toEqual([503, 200])
    expect(JSON.parse(delivered.raw)).toEqual(alarm)
    expect(delivered.headers).toMatchObject({ 'x-event-id': '41', 'x-event-kind': 'alarm.raised' })
    expect(verifyWebhook('k', String(delivered.headers['x-event-timestamp']), delivered.raw, String(delivered.headers['x-event-signature']))).toBe(true)
    expect(published).toEqual([['site/alarms', JSON.stringify(alarm)]])
    expect(played).toEqual([{ columnId: 'col', audioId: 'bell' }])
    await subject.stop()
    expect(emitted).toEqual([])
  })

  it('an action that fails every attempt is an alarm.actionFailed event naming it', { timeout: 20_000 }, async () => {
    receiver = await startReceiver()
    receiver.respond = () => 500
    const { subject, emitted } = actions({
      publish: async () => { throw new Error('mqtt connecting') },
      play: async () => { throw new ApiError('AudioColumnUnreachable', { details: { columnId: 'col' } }) },
    })
    subject.dispatch(alarm, [{ type: 'webhook', url: receiver.url }, { type: 'mqtt', topic: 't' }, { type: 'audio', columnId: 'col', audioId: 'bell' }], 'p-1')
    await until(async () => emitted.length === 3, 'three failures', 15_000)
    const failures = Object.fromEntries(emitted.map((e) => [e.payload.action, e]))
    expect(emitted.every((e) => e.kind === 'alarm.actionFailed')).toBe(true)
    expect(failures.webhook!.payload).toEqual({ alarmId: 'a-1', alarmEventId: 41, policyId: 'p-1', action: 'webhook', target: receiver.url, attempts: 3, reason: 'HTTP 500' })
    expect(receiver.deliveries).toHaveLength(3)
    expect(failures.mqtt!.payload).toMatchObject({ target: 't', attempts: 3, reason: 'mqtt connecting' })
    expect(failures.audio!.payload).toMatchObject({ target: 'col', attempts: 1, reason: expect.stringMatching(/^api\.error\.AudioColumnUnreachable: /) })
    await subject.stop()
  })

  it('stop abandons deliveries still waiting to be retried, without reporting them', async () => {
    receiver = await startReceiver()
    receiver.respond = () => 500
    const { subject, emitted } = actions()
    subject.dispatch(alarm, [{ type: 'webhook', url: receiver.url }], 'p-1')
    await receiver.waitFor(() => true, 5000)
    await subject.stop()
    expect(receiver.deliveries).toHaveLength(1)
    expect(emitted).toEqual([])
  })
})
