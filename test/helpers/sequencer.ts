import { BaseSequencer, type TestSpecification } from 'vitest/node'

/** The order projects start in: the longest files first, so that short ones fill in beside them. */
const PROJECT_ORDER = ['e2e', 'browser', 'integration', 'unit']

/**
 * Files of the longest-running project first; within a project the last run's longest files
 * first (vitest's own order: its results cache, else the larger file first).
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (spec: TestSpecification) => {
      const index = PROJECT_ORDER.indexOf(spec.project.name)
      return index === -1 ? PROJECT_ORDER.length : index
    }
    return sorted.map((spec, index) => ({ spec, index }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.index - b.index)
      .map(({ spec }) => spec)
  }
}
