import type { PolicyConditions, RecognitionCondition } from '../../shared/alarms/types.ts'
import type { ObjectRecognition } from '../../shared/galleries/types.ts'
import type { Track } from '../streams/tracker.ts'

/** What the evaluator needs of a policy. */
export interface PolicyRule {
  policyId: string
  conditions: PolicyConditions
  cooldownS: number
  scheduleId: string | null
}

export interface AlarmCandidate<P extends PolicyRule = PolicyRule> {
  policy: P
  /** The object the alarm is about; with minCount > 1, every object that met the conditions. */
  objects: Track[]
  /** The longest time one of them has met the conditions (ms, between sightings). */
  dwellMs: number
}

/** An object meeting a policy's conditions since `since` (ms); `raised`: this stay already gave its alarm (or was held back by the cooldown). */
interface Stay { since: number; raised: boolean }

/** Whom an object's recognition names, per `seen`: a watch-list person of the galleries, or nobody. */
const SEEN: Record<RecognitionCondition['seen'], (r: ObjectRecognition, c: RecognitionCondition) => boolean> = {
  watchList: (r, c) => r.personId !== null && (c.galleryIds === undefined || c.galleryIds.includes(r.galleryId!)),
  stranger: (r) => r.personId === null,
}

const matches = (c: PolicyConditions, track: Track): boolean =>
  (c.label === undefined || track.label === c.label) &&
  (c.areaId === undefined || track.areaId === c.areaId) &&
  (c.logicResult !== true || track.target?.bLogicResult === true) &&
  // No face seen yet: neither a watch-list person nor a stranger.
  (c.recognition === undefined || (track.recognition !== undefined && SEEN[c.recognition.seen](track.recognition, c.recognition)))

/**
 * The conditions of the alarm policies over one stream task's tracked objects (spec 4.10
 * Linkage / alarm policy). An object's stay starts when it first meets a policy's conditions
 * (its first sighting, when it met them from the start) and ends when it no longer does or
 * leaves; a stay that lasts `minDwellS` raises one alarm — so one loitering person is one
 * alarm, not one per frame — unless the same object raised one for the policy less than
 * `cooldownS` ago. With `minCount` > 1 the policy raises when that many objects meet the
 * conditions at once, again at most once per `cooldownS`. Times are the frames' (ms).
 */
export class PolicyEvaluator<P extends PolicyRule = PolicyRule> {
  /** policyId → objectId → stay. */
  private readonly stays = new Map<string, Map<string, Stay>>()
  /** `policyId objectId` (or `policyId *` for a group) → time of its last alarm. */
  private readonly lastAlarm = new Map<string, number>()
  /** Policies whose group condition held on the previous frame. */
  private readonly groupOn = new Set<string>()
  /** Objects seen before, so that one meeting the conditions later starts its stay then. */
  private readonly known = new Set<string>()

  /** `open(scheduleId)`: whether the schedule is on now. */
  evaluate(policies: readonly P[], tracks: readonly Track[], at: number, open: (scheduleId: string) => boolean): AlarmCandidate<P>[] {
    const out: AlarmCandidate<P>[] = []
    for (const policy of policies) {
      const stays = this.staysOf(policy, tracks)
      const dwell = (track: Track) => track.lastSeen - stays.get(track.id)!.since
      const qualifying = tracks.filter((t) => stays.has(t.id) && dwell(t) >= (policy.conditions.minDwellS ?? 0) * 1000)
      if (policy.scheduleId !== null && !open(policy.scheduleId)) {
        // Stays go on; a group still there when the schedule turns on raises then.
        this.groupOn.delete(policy.policyId)
        continue
      }
      const minCount = policy.conditions.minCount ?? 1
      if (minCount <= 1) {
        for (const track of qualifying) {
          const stay = stays.get(track.id)!
          if (stay.raised) continue
          stay.raised = true
          if (this.cooled(`${policy.policyId} ${track.id}`, at, policy.cooldownS)) out.push({ policy, objects: [track], dwellMs: dwell(track) })
        }
        continue
      }
      const on = qualifying.length >= minCount
      const rising = on && !this.groupOn.has(policy.policyId)
      if (on) this.groupOn.add(policy.policyId)
      else this.groupOn.delete(policy.policyId)
      if (rising && this.cooled(`${policy.policyId} *`, at, policy.cooldownS))
        out.push({ policy, objects: qualifying, dwellMs: Math.max(...qualifying.map(dwell)) })
    }
    this.forget(policies, tracks)
    return out
  }

  /** The policy's stays after this frame: begun, kept, or ended. */
  private staysOf(policy: P, tracks: readonly Track[]): Map<string, Stay> {
    let stays = this.stays.get(policy.policyId)
    if (!stays) this.stays.set(policy.policyId, stays = new Map())
    const meeting = new Set<string>()
    for (const track of tracks) {
      if (!matches(policy.conditions, track)) continue
      meeting.add(track.id)
      if (!stays.has(track.id)) stays.set(track.id, { since: this.known.has(track.id) ? track.lastSeen : track.firstSeen, raised: false })
    }
    for (const id of stays.keys()) if (!meeting.has(id)) stays.delete(id)
    return stays
  }

  /** Whether the cooldown since the key's last alarm is over; if so, the alarm is counted now. */
  private cooled(key: string, at: number, cooldownS: number): boolean {
    const last = this.lastAlarm.get(key)
    if (last !== undefined && at - last < cooldownS * 1000) return false
    this.lastAlarm.set(key, at)
    return true
  }

  /** Objects that left come back under new ids, and deleted policies do not come back: their state goes. */
  private forget(policies: readonly P[], tracks: readonly Track[]): void {
    const current = new Set(policies.map((p) => p.policyId))
    const present = new Set(tracks.map((t) => t.id))
    for (const id of this.known) if (!present.has(id)) this.known.delete(id)
    for (const id of present) this.known.add(id)
    for (const key of this.lastAlarm.keys()) {
      const [policyId = '', objectId = ''] = key.split(' ')
      if (!current.has(policyId) || (objectId !== '*' && !present.has(objectId))) this.lastAlarm.delete(key)
    }
    for (const policyId of this.stays.keys()) if (!current.has(policyId)) this.stays.delete(policyId)
    for (const policyId of this.groupOn) if (!current.has(policyId)) this.groupOn.delete(policyId)
  }
}
