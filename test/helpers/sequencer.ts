import { readFileSync } from 'node:fs'
import path from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/** The order projects start in: the longest files first, so that short ones fill in beside them. */
const PROJECT_ORDER = ['e2e', 'browser', 'integration', 'unit']

const root = path.resolve(import.meta.dirname, '../..')

/**
 * Seconds per file ("<project>:<path>") of a full run, committed (test/record-durations.mjs):
 * a fresh clone, as CI runs, has no vitest results cache, and vitest would then start the
 * largest files first, not the longest.
 */
const recorded: Record<string, number> = JSON.parse(readFileSync(path.join(root, 'test/durations.json'), 'utf8'))

/**
 * Files of the longest-running project first; within a project the longest files first, by the
 * committed durations; files not in them (new ones) after, in vitest's own order (its results
 * cache, else the larger file first).
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (spec: TestSpecification) => {
      const index = PROJECT_ORDER.indexOf(spec.project.name)
      return index === -1 ? PROJECT_ORDER.length : index
    }
    const seconds = (spec: TestSpecification) => recorded[`${spec.project.name}:${path.relative(root, spec.moduleId)}`] ?? -1
    return sorted.map((spec, index) => ({ spec, index, seconds: seconds(spec) }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || b.seconds - a.seconds || a.index - b.index)
      .map(({ spec }) => spec)
  }
}
