import { catalogue, type ErrorId } from '../../shared/errors/catalogue.ts'
import type { MessageItem } from '../../shared/errors/index.ts'
import type { SetupBlock } from './build-case.ts'

/**
 * Which setup failures block a step (spec 2.8, 3.3: `setup-blocked` with `binding-blocked` or
 * `storage-blocked`), as data: the catalogue id of the error TaskCreate answered.
 * - binding: the task cannot be bound to a pipeline (unknown algorithm, a model it needs is
 *   missing — e.g. no operator-supplied helmet classifier — or initialisation failed);
 * - storage: the device's safe disk space is used up.
 * Any other error is not a capacity boundary and ends the run as an error.
 */
export const SETUP_BLOCKS: Partial<Record<ErrorId, SetupBlock['boundaryKind']>> = {
  ActionAlgLoadFailed: 'binding-blocked',
  TaskCreateFailed: 'binding-blocked',
  STORAGE_RESERVE_REACHED: 'storage-blocked',
}

/** The setup block an answered error (a `resMsg` item) stands for, or null when it is not one. */
export function setupBlockOf(item: Pick<MessageItem, 'messageKey' | 'msgText'>, what: string): SetupBlock | null {
  const id = (Object.keys(SETUP_BLOCKS) as ErrorId[]).find((k) => catalogue[k].messageKey === item.messageKey)
  return id === undefined ? null : { boundaryKind: SETUP_BLOCKS[id]!, reason: `${what}: ${item.messageKey} — ${item.msgText}` }
}
