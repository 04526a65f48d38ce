import type { TaskName } from '../case/constants.ts'

/**
 * Which algorithm (pipeline manifest, `algorithmId`) runs each capacity task. Algorithm ids
 * differ by deployment (spec 2.3), so `--algorithm TASK=ID` overrides a row. A task whose
 * algorithm the device does not have fails to load: the step is `binding-blocked`.
 */
export const DEFAULT_ALGORITHM_BY_TASK: Record<TaskName, string> = {
  'person-detector': 'person-detector',
  'no-safety-helmet-analysis': 'no-safety-helmet-analysis',
}
