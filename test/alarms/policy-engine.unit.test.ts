import { describe, expect, it } from 'vitest'
import { PolicyEvaluator, type PolicyRule } from '../../runtime/alarms/engine.ts'
import type { Track } from '../../runtime/streams/tracker.ts'
import type { PolicyConditions } from '../../shared/alarms/types.ts'

const policy = (conditions: PolicyConditions, cooldownS = 60, scheduleId: string | null = null): PolicyRule => ({ policyId: 'p', conditions, cooldownS, scheduleId })

/** A track as the tracker keeps it after a sighting at `at`. */
const track = (id: string, firstSeen: number, at: number, extra: Partial<Track> = {}): Track => ({
  id, label: 'person', confidence: 0.9, box: { x: 10, y: 10, width: 50, height: 100 }, areaId: '0',
  firstSeen, lastSeen: at, hits: 5, confirmed: true, velocity: { x: 0, y: 0 }, ...extra,
})

/**
 * Runs frames every 200 ms from `from` to `to` (ms); `tracks(at)` are the objects tracked on
 * each. Answers [frame time, object ids] of every alarm.
 */
function run(evaluator: PolicyEvaluator, rule: PolicyRule, from: number, to: number, tracks: (at: number) => Track[], open: (at: number) => boolean = () => true) {
  const alarms: [number, string[]][] = []
  for (let at = from; at <= to; at += 200)
    for (const alarm of evaluator.evaluate([rule], tracks(at), at, () => open(at))) alarms.push([at, alarm.objects.map((o) => o.id)])
  return alarms
}

describe('alarm policy conditions over tracked objects (spec 4.10 Linkage / alarm policy)', () => {
  it('a minimum dwell: one alarm when a stay reaches it, none for a shorter stay, never one per frame', () => {
    const rule = policy({ label: 'person', minDwellS: 3 })
    // Object 1 stays 10 s (first seen at 0); object 2 stays 2.8 s (from 20 s).
    const alarms = run(new PolicyEvaluator(), rule, 0, 30_000, (at) => [
      ...(at <= 10_000 ? [track('1', 0, at)] : []),
      ...(at >= 20_000 && at <= 22_800 ? [track('2', 20_000, at)] : []),
    ])
    expect(alarms).toEqual([[3000, ['1']]])
  })

  it('a region: the stay counts from entering it; leaving and coming back within the cooldown raises nothing, after it one more', () => {
    // In the region from 5 s to 9 s and again from 10 s on; tracked since 0 s.
    const inDoor = (at: number) => (at >= 5000 && at < 9000) || at >= 10_000
    const tracks = (at: number) => [track('1', 0, at, { areaId: inDoor(at) ? 'door' : '0' })]
    expect(run(new PolicyEvaluator(), policy({ areaId: 'door', minDwellS: 3 }, 60), 0, 20_000, tracks)).toEqual([[8000, ['1']]])
    expect(run(new PolicyEvaluator(), policy({ areaId: 'door', minDwellS: 3 }, 0), 0, 20_000, tracks)).toEqual([[8000, ['1']], [13_000, ['1']]])
  })

  it('other labels and objects whose logic node did not answer true are not counted', () => {
    const tracks = (at: number) => [
      track('car', 0, at, { label: 'car' }),
      track('helmet', 0, at, { target: { box: { x: 0, y: 0, width: 1, height: 1 }, confidence: [], landmark: [], maskPolygon: [], bLogicResult: false } }),
      track('bare', 1000, at, { target: { box: { x: 0, y: 0, width: 1, height: 1 }, confidence: [], landmark: [], maskPolygon: [], bLogicResult: true } }),
    ]
    expect(run(new PolicyEvaluator(), policy({ label: 'person', logicResult: true }), 0, 5000, tracks)).toEqual([[1000, ['bare']]])
  })

  it('a minimum count: one alarm when enough objects are there at once, again only after the cooldown', () => {
    // Two people 0–4 s, one 4–6 s, two again 6–8 s (within the 10 s cooldown) and 12–14 s (after it).
    const two = (at: number) => (at < 4000) || (at >= 6000 && at < 8000) || (at >= 12_000 && at < 14_000)
    const tracks = (at: number) => [track('1', 0, at), ...(two(at) ? [track(at < 4000 ? '2' : at < 8000 ? '3' : '4', at, at)] : [])]
    expect(run(new PolicyEvaluator(), policy({ minCount: 2 }, 10), 0, 16_000, tracks)).toEqual([[0, ['1', '2']], [12_000, ['1', '4']]])
  })

  it('outside its schedule a policy raises nothing; an object still loitering when it turns on raises then', () => {
    const alarms = run(new PolicyEvaluator(), policy({ minDwellS: 1 }, 60, 'office-hours'), 0, 10_000, (at) => [track('1', 0, at)], (at) => at >= 6000)
    expect(alarms).toEqual([[6000, ['1']]])
  })

  it('an object that leaves and is tracked again is a new object; a deleted policy leaves no state behind', () => {
    const evaluator = new PolicyEvaluator()
    const rule = policy({ minDwellS: 1 }, 3600)
    const alarms = run(evaluator, rule, 0, 10_000, (at) => at < 4000 ? [track('1', 0, at)] : at >= 6000 ? [track('2', 6000, at)] : [])
    expect(alarms).toEqual([[1000, ['1']], [7000, ['2']]])
    evaluator.evaluate([], [], 11_000, () => true)
    expect(run(evaluator, rule, 12_000, 14_000, (at) => [track('2', 6000, at)])).toEqual([[12_000, ['2']]])
  })

  describe('recognition conditions (the task\'s recognition, kept on each track)', () => {
    const alice = { name: 'Alice', personId: 'p1', galleryId: 'staff', similarity: 0.82 }
    const bob = { name: 'Bob', personId: 'p2', galleryId: 'visitors', similarity: 0.75 }
    const nobody = { name: 'unknown', personId: null, galleryId: null, similarity: 0.41 }
    /** Faces tracked from 0 s; each named from 1 s on (its face described then): Alice, Bob, a stranger; one face never seen. */
    const tracks = (at: number) => [
      track('alice', 0, at, { label: 'face', ...(at >= 1000 ? { recognition: alice } : {}) }),
      track('bob', 0, at, { label: 'face', ...(at >= 1000 ? { recognition: bob } : {}) }),
      track('stranger', 0, at, { label: 'face', ...(at >= 1000 ? { recognition: nobody } : {}) }),
      track('unseen', 0, at, { label: 'face' }),
    ]

    it('watch list: a person of the named galleries, any gallery when none is named; once per object, when it is named', () => {
      expect(run(new PolicyEvaluator(), policy({ recognition: { seen: 'watchList', galleryIds: ['staff'] } }), 0, 5000, tracks)).toEqual([[1000, ['alice']]])
      expect(run(new PolicyEvaluator(), policy({ recognition: { seen: 'watchList' } }), 0, 5000, tracks)).toEqual([[1000, ['alice']], [1000, ['bob']]])
    })

    it('stranger: a face described that matched nobody, not an object whose face was not seen yet', () => {
      expect(run(new PolicyEvaluator(), policy({ recognition: { seen: 'stranger' } }), 0, 5000, tracks)).toEqual([[1000, ['stranger']]])
    })

    it('the dwell counts from when the object was named; the other conditions still apply', () => {
      expect(run(new PolicyEvaluator(), policy({ recognition: { seen: 'stranger' }, minDwellS: 2 }), 0, 5000, tracks)).toEqual([[3000, ['stranger']]])
      expect(run(new PolicyEvaluator(), policy({ recognition: { seen: 'watchList' }, label: 'person' }), 0, 5000, tracks)).toEqual([])
    })

    it('an answer that changes (a better view) ends one stay and may begin the other kind\'s', () => {
      // Taken for a stranger at 1 s, named Alice from 2 s on: one alarm of each policy, at the time of each answer.
      const changing = (at: number) => [track('1', 0, at, { label: 'face', ...(at >= 2000 ? { recognition: alice } : at >= 1000 ? { recognition: nobody } : {}) })]
      const evaluator = new PolicyEvaluator()
      const rules = [{ ...policy({ recognition: { seen: 'stranger' } }), policyId: 'stranger' }, { ...policy({ recognition: { seen: 'watchList' } }), policyId: 'watch' }]
      const alarms: [number, string][] = []
      for (let at = 0; at <= 5000; at += 200)
        for (const alarm of evaluator.evaluate(rules, changing(at), at, () => true)) alarms.push([at, alarm.policy.policyId])
      expect(alarms).toEqual([[1000, 'stranger'], [2000, 'watch']])
    })
  })
})
