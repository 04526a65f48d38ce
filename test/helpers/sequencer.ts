import { readFileSync } from 'node:fs'
import path from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/** The order projects start in: the longest-running project first, so that short ones fill in beside them. */
const PROJECT_ORDER = ['e2e', 'integration', 'browser', 'unit']

/**
 * Files of each project running at once where projects share a group (vitest.config.ts): the
 * group's workers take the next file of one queue, so the queue is laid out as these lanes
 * would take the files, by their recorded durations.
 */
export const LANES: Record<string, number> = { e2e: 4, integration: 2, browser: 3, unit: 1 }

/** What a file not in the recorded durations (a new one) is counted as (s). */
const UNRECORDED_SECONDS = 10

const root = path.resolve(import.meta.dirname, '../..')

/**
 * Seconds per file ("<project>:<path>") of a full run, committed (test/record-durations.mjs):
 * a fresh clone, as CI runs, has no vitest results cache, and vitest would then start the
 * largest files first, not the longest.
 */
const recorded: Record<string, number> = JSON.parse(readFileSync(path.join(root, 'test/durations.json'), 'utf8'))

interface Entry { spec: TestSpecification; seconds: number }

/** `entries` by `keyOf`, each list in the entries' order. */
function groupBy<K>(entries: Entry[], keyOf: (entry: Entry) => K): Map<K, Entry[]> {
  const groups = new Map<K, Entry[]>()
  for (const entry of entries) {
    const key = keyOf(entry)
    const group = groups.get(key)
    if (group) group.push(entry)
    else groups.set(key, [entry])
  }
  return groups
}

/**
 * One group's files in the order its workers should take them: each project's files longest
 * first, on LANES[project] lanes of its own; the next file is the one whose lane frees first.
 */
function byLanes(entries: Entry[]): Entry[] {
  const queues = groupBy(entries, (entry) => entry.spec.project.name)
  const lanes = [...queues.keys()].flatMap((project) => Array.from({ length: LANES[project] ?? 1 }, () => ({ project, freeAt: 0 })))
  const order: Entry[] = []
  while (order.length < entries.length) {
    const lane = lanes.filter((l) => queues.get(l.project)!.length > 0)
      .reduce((a, b) => (b.freeAt < a.freeAt || (b.freeAt === a.freeAt && PROJECT_ORDER.indexOf(b.project) < PROJECT_ORDER.indexOf(a.project)) ? b : a))
    const entry = queues.get(lane.project)!.shift()!
    lane.freeAt += entry.seconds < 0 ? UNRECORDED_SECONDS : entry.seconds
    order.push(entry)
  }
  return order
}

/**
 * Within each project the longest files first, by the committed durations; files not in them
 * (new ones) after, in vitest's own order (its results cache, else the larger file first). The
 * projects of one group are interleaved by their lanes (`byLanes`).
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (spec: TestSpecification) => {
      const index = PROJECT_ORDER.indexOf(spec.project.name)
      return index === -1 ? PROJECT_ORDER.length : index
    }
    const seconds = (spec: TestSpecification) => recorded[`${spec.project.name}:${path.relative(root, spec.moduleId)}`] ?? -1
    const entries = sorted.map((spec, index) => ({ spec, index, seconds: seconds(spec) }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || b.seconds - a.seconds || a.index - b.index)
    const groups = groupBy(entries, (entry) => entry.spec.project.config.sequence.groupOrder ?? 0)
    return [...groups.keys()].sort((a, b) => a - b).flatMap((group) => byLanes(groups.get(group)!)).map(({ spec }) => spec)
  }
}
