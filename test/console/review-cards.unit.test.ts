import { describe, expect, it } from 'vitest'
import { applyEvent, shownCards, type ReviewCard, type ReviewEvent } from '../../runtime/console/review-cards.ts'

const T0 = Date.parse('2026-11-28T10:00:00.000Z')
const at = (s: number) => new Date(T0 + s * 1000).toISOString()
const ev = (id: number, kind: string, s: number, payload: Record<string, unknown>, clipUrl: string | null = null): ReviewEvent =>
  ({ id, kind: kind as ReviewEvent['kind'], time: at(s), source: 'analysis', payload, clipUrl })
const base = { taskId: 't1', cameraId: 'c1', label: 'person' }
const reduce = (events: ReviewEvent[]) => events.reduce(applyEvent, new Map<string, ReviewCard>())

describe('review cards (docs/console-and-cli.md "Review")', () => {
  it('groups entered, alarm, recognised name, left and the clip written afterwards into one card per tracked object', () => {
    const cards = reduce([
      ev(1, 'object.entered', 0, { ...base, objectId: 'o1', snapshotUrl: '/snap/1' }),
      ev(2, 'object.entered', 1, { ...base, objectId: 'o2', snapshotUrl: '/snap/2' }),
      ev(3, 'object.recognized', 2, { ...base, objectId: 'o1', name: 'Ann', galleryId: 'g1', similarity: 0.8 }),
      ev(4, 'alarm.raised', 4, { ...base, objectId: 'o1', alarmId: 'a1', policyId: 'p1', policyName: 'door', message: 'door: person for 4 s', snapshotUrl: '/alarm/a1' }),
      ev(5, 'object.left', 9, { ...base, objectId: 'o1', dwellMs: 8500 }),
      ev(6, 'recording.clipReady', 12, { eventId: 1, clipUrl: '/clip/1' }),
    ])
    expect(cards.size).toBe(2)
    expect(cards.get('t1/o1')).toEqual({
      key: 't1/o1', taskId: 't1', cameraId: 'c1', objectId: 'o1', label: 'person', enteredAt: T0, entryEventId: 1, snapshotUrl: '/snap/1', clipUrl: '/clip/1',
      alarms: [{ eventId: 4, time: T0 + 4000, alarmId: 'a1', policyId: 'p1', policyName: 'door', message: 'door: person for 4 s', snapshotUrl: '/alarm/a1', clipUrl: null }],
      recognized: { time: T0 + 2000, name: 'Ann', galleryId: 'g1', similarity: 0.8 }, leftAt: T0 + 9000, dwellMs: 8500, lastTime: T0 + 9000,
    })
    expect(cards.get('t1/o2')).toMatchObject({ enteredAt: T0 + 1000, leftAt: null, alarms: [], recognized: null })
  })

  it('takes events in any order (history read after live ones) and attaches an alarm clip to its alarm', () => {
    const cards = reduce([
      ev(5, 'object.left', 9, { ...base, objectId: 'o1', dwellMs: 8500 }),
      ev(4, 'alarm.raised', 4, { ...base, objectId: null, objectIds: ['o1', 'o3'], alarmId: 'a1', policyId: 'p1', message: 'm' }),
      ev(1, 'object.entered', 0, { ...base, objectId: 'o1', snapshotUrl: '/snap/1' }),
      ev(7, 'recording.clipReady', 20, { eventId: 4, clipUrl: '/clip/a1' }),
    ])
    const card = cards.get('t1/o1')!
    expect([card.enteredAt, card.leftAt, card.dwellMs, card.lastTime]).toEqual([T0, T0 + 9000, 8500, T0 + 9000])
    expect(card.alarms.map((a) => [a.alarmId, a.clipUrl])).toEqual([['a1', '/clip/a1']])
    // Events of other kinds, or without a task and object, make no card.
    expect(reduce([ev(1, 'camera.online', 0, { cameraId: 'c1' }), ev(2, 'alarm.raised', 0, { taskId: 't1', objectId: null, objectIds: [] })]).size).toBe(0)
  })

  it('filters by camera, label, policy and time, newest first', () => {
    const cards = reduce([
      ev(1, 'object.entered', 0, { ...base, objectId: 'o1' }),
      ev(2, 'object.entered', 10, { ...base, cameraId: 'c2', objectId: 'o2' }),
      ev(3, 'object.entered', 20, { ...base, label: 'car', objectId: 'o3' }),
      ev(4, 'alarm.raised', 30, { ...base, objectId: 'o1', alarmId: 'a', policyId: 'p1', message: 'm' }),
    ]).values()
    const all = [...cards]
    const keys = (f: Partial<Parameters<typeof shownCards>[1]>) => shownCards(all, { cameraId: '', label: '', policyId: '', from: null, to: null, ...f }).map((c) => c.objectId)
    expect(keys({})).toEqual(['o1', 'o3', 'o2'])
    expect(keys({ cameraId: 'c2' })).toEqual(['o2'])
    expect(keys({ label: ' Car ' })).toEqual(['o3'])
    expect(keys({ policyId: 'p1' })).toEqual(['o1'])
    expect(keys({ policyId: 'p2' })).toEqual([])
    expect(keys({ from: T0 + 5000, to: T0 + 20_000 })).toEqual(['o2'])
  })
})
