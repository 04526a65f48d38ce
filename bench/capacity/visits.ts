import path from 'node:path'

/**
 * Which person visits of the footage a channel's `object.entered` events found during a
 * step's hold. The RTSP server reports when each pipeline started its file and started it
 * over, and the runner knows where in the footage the file begins (rotated.ts), so a
 * wall-clock time maps to a position in the footage. Pure.
 *
 * A visit instance (visit i in the loop that started at L) is expected when the person is in
 * view from start to end within the hold; it is found when the channel raised an
 * `object.entered` while the person could be in view: from 2 s before the listed entry (the
 * table was read from one frame every 2 s) to 2 s after the listed exit (detection latency).
 */

export interface Footage {
  /** Length of one pass through the file, s. */
  loopSeconds: number
  /** Each visit as [walks in, has left], s into the file, as counted from its frames. */
  visits: [number, number][]
}

/** Footage whose visits are known, by file name (../shared/media/README.md). */
export const KNOWN_FOOTAGE: Record<string, Footage> = {
  // Counted from one frame every 2 s: six people, one at a time; 139.4 s long.
  'one-by-one-person-detection.mp4': { loopSeconds: 139.4, visits: [[5, 19], [21, 44], [49, 69], [73, 86], [91, 119], [123, 135]] },
}

export const footageOf = (video: string): Footage | null => KNOWN_FOOTAGE[path.basename(video)] ?? null

const SLACK_MS = 2000

export interface VisitCheck {
  /** Visit indices (0-based) with an instance wholly inside the hold. */
  expected: number[]
  /** Expected visits with an `object.entered` in each of their instances. */
  found: number[]
  missed: number[]
  /** `object.entered` events in the hold while no visit was in view (an empty stretch). */
  enteredOutsideVisits: number
}

/**
 * A pipeline playing the footage in a loop from `offsetSeconds` into it (rotated.ts): it
 * started at `startedAt` and started over at `loops` (ms since epoch), each time at that point.
 */
export interface Playback { startedAt: number; offsetSeconds: number; loops: number[] }

/** `window`: the hold; `entered`: the channel's `object.entered` times (ms since epoch). */
export function checkVisits(footage: Footage, playback: Playback, window: { start: number; end: number }, entered: number[]): VisitCheck {
  // When the footage was (or would have been) at 0 s: one per pass, and the one after the last.
  const zeros = [playback.startedAt, ...playback.loops].map((t) => t - playback.offsetSeconds * 1000)
  zeros.push(zeros[zeros.length - 1]! + footage.loopSeconds * 1000)
  const inHold = entered.filter((t) => t >= window.start && t <= window.end)
  const instances = zeros.flatMap((zero, k) => footage.visits.map(([walksIn, hasLeft], visit) => ({
    visit,
    start: Math.max(zero + walksIn * 1000, playback.startedAt),
    end: Math.min(zero + hasLeft * 1000, zeros[k + 1] ?? Infinity),
  }))).filter((i) => i.start < i.end)
  const seen = (i: { start: number; end: number }) => inHold.some((t) => t >= i.start - SLACK_MS && t <= i.end + SLACK_MS)
  const whole = instances.filter((i) => i.start >= window.start && i.end <= window.end)
  const expected = [...new Set(whole.map((i) => i.visit))].sort((a, b) => a - b)
  const found = expected.filter((v) => whole.filter((i) => i.visit === v).every(seen))
  return {
    expected,
    found,
    missed: expected.filter((v) => !found.includes(v)),
    enteredOutsideVisits: inHold.filter((t) => !instances.some((i) => t >= i.start - SLACK_MS && t <= i.end + SLACK_MS)).length,
  }
}

export interface ChannelVisits { channel: number; visits: VisitCheck | null }

/**
 * Visits the `reference` run found that the `candidate` run missed, channel by channel (the
 * same channel sees the same footage in both runs): a visit counts where the candidate had
 * an instance of it wholly in its hold (`compared`), else it is `notComparable`.
 */
export function compareVisits(reference: ChannelVisits[], candidate: ChannelVisits[]): { compared: number; missed: { channel: number; visit: number }[]; notComparable: number } {
  let compared = 0
  let notComparable = 0
  const missed: { channel: number; visit: number }[] = []
  for (const ref of reference) {
    const cand = candidate.find((c) => c.channel === ref.channel)?.visits
    for (const visit of ref.visits?.found ?? []) {
      if (!cand?.expected.includes(visit)) {
        notComparable++
        continue
      }
      compared++
      if (!cand.found.includes(visit)) missed.push({ channel: ref.channel, visit })
    }
  }
  return { compared, missed, notComparable }
}
