import { isApiError } from '../../shared/errors/index.ts'
import type { SetupBlock } from './build-case.ts'

/**
 * Which setup failures block a step (spec 2.8, 3.3: `setup-blocked` with `binding-blocked` or
 * `storage-blocked`), as data: the catalogue id of the error the pipeline load answered.
 * - binding: the task cannot be bound to a pipeline (unknown algorithm, model or pipeline
 *   initialisation failed);
 * - storage: the device's safe disk space is used up.
 * Any other error is not a capacity boundary and ends the run as an error.
 */
export const SETUP_BLOCKS: Record<string, SetupBlock['boundaryKind']> = {
  ActionAlgLoadFailed: 'binding-blocked',
  TaskCreateFailed: 'binding-blocked',
  STORAGE_RESERVE_REACHED: 'storage-blocked',
}

/** The setup block an error stands for, or null when it is not one. */
export function setupBlockOf(err: unknown, what: string): SetupBlock | null {
  if (!isApiError(err)) return null
  const kind = SETUP_BLOCKS[err.id]
  return kind === undefined ? null : { boundaryKind: kind, reason: `${what}: ${err.item.messageKey} — ${err.message}` }
}
