import type { Clock } from '../../shared/handler.ts'
import type { UploadSessionRow } from './repository.ts'
import { monotonicOf } from '../../shared/clock.ts'

/** Where a session's creation and last activity lie on the monotonic clock, and the wall times the row holds for them. */
interface Anchor {
  wallCreated: number
  monoCreated: number
  wallActivity: number
  monoActivity: number
}

/** Sessions kept in memory at most; the oldest anchor goes first (it is made again from its row). */
const MAX_ANCHORS = 10_000

export interface SessionAges {
  /** ms since the session was created. */
  sinceCreated: number
  /** ms since its last accepted bytes (or its creation). */
  sinceActivity: number
}

/**
 * The ages of upload sessions on the monotonic clock while the process runs (docs/uploads.md
 * "Expiry and the clock"), so that a wall-clock step (a device without a battery-backed clock
 * that boots at the wrong time and is set by NTP) neither ends a live upload nor keeps a dead one.
 *
 * The rows keep wall-clock times (createdAt, lastActivityAt), which survive a restart. A session
 * is anchored once: when this process creates it or records its activity (`touched`), at that
 * moment; a session it first meets in the database (written before a restart) by the age its
 * row gives against the wall clock then, never less than 0. From then on only the monotonic
 * clock ages it.
 */
export class SessionTimes {
  readonly #anchors = new Map<string, Anchor>()
  readonly #claims = new Map<string, { wall: number; mono: number }>()
  readonly #monotonic: () => number

  constructor(private readonly clock: Clock) {
    this.#monotonic = monotonicOf(clock)
  }

  /** The row of `id` now holds `wall` as its lastActivityAt (and createdAt when `created`), written just now. */
  touched(id: string, wall: number, created = false): void {
    const mono = this.#monotonic()
    const anchor = this.#anchors.get(id)
    if (created) this.#remember(id, { wallCreated: wall, monoCreated: mono, wallActivity: wall, monoActivity: mono })
    else if (anchor) Object.assign(anchor, { wallActivity: wall, monoActivity: mono })
    // Not anchored yet (met after a restart): `ages` anchors it from its row, just written.
  }

  ages(session: Pick<UploadSessionRow, 'id' | 'createdAt' | 'lastActivityAt'>): SessionAges {
    const mono = this.#monotonic()
    const wall = this.clock.now()
    const since = (at: number) => mono - Math.max(0, wall - at)
    let anchor = this.#anchors.get(session.id)
    if (!anchor || anchor.wallCreated !== session.createdAt) {
      anchor = this.#remember(session.id, { wallCreated: session.createdAt, monoCreated: since(session.createdAt), wallActivity: session.lastActivityAt, monoActivity: since(session.lastActivityAt) })
    } else if (anchor.wallActivity !== session.lastActivityAt) {
      // Activity this process did not record (it cannot happen through the service): from the row.
      Object.assign(anchor, { wallActivity: session.lastActivityAt, monoActivity: since(session.lastActivityAt) })
    }
    return { sinceCreated: mono - anchor.monoCreated, sinceActivity: mono - anchor.monoActivity }
  }

  /**
   * Anchored sessions whose idle (`idleMs`) or absolute (`absoluteMs`) deadline has passed on
   * the monotonic clock (0 = that rule off); the caller checks each row's state.
   */
  due(idleMs: number, absoluteMs: number): string[] {
    const mono = this.#monotonic()
    const ids: string[] = []
    for (const [id, anchor] of this.#anchors) {
      if ((idleMs > 0 && mono - anchor.monoActivity >= idleMs) || (absoluteMs > 0 && mono - anchor.monoCreated >= absoluteMs)) ids.push(id)
    }
    return ids
  }

  /** The session was claimed (consumed) just now, its row's endedAt being `wall`. */
  claimed(id: string, wall: number): void {
    this.#claims.set(id, { wall, mono: this.#monotonic() })
    if (this.#claims.size > MAX_ANCHORS) this.#claims.delete(this.#claims.keys().next().value!)
  }

  /** ms since a consumed session was claimed: monotonic when claimed by this process, else from its row's endedAt. */
  sinceClaimed(id: string, endedAt: number): number {
    const claim = this.#claims.get(id)
    if (claim && claim.wall === endedAt) return this.#monotonic() - claim.mono
    return Math.max(0, this.clock.now() - endedAt)
  }

  forget(id: string): void {
    this.#anchors.delete(id)
    this.#claims.delete(id)
  }

  #remember(id: string, anchor: Anchor): Anchor {
    this.#anchors.delete(id)
    this.#anchors.set(id, anchor)
    if (this.#anchors.size > MAX_ANCHORS) this.#anchors.delete(this.#anchors.keys().next().value!)
    return anchor
  }
}
