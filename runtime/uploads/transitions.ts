import { ApiError, type ErrorId } from '../../shared/errors/index.ts'
import type { UploadState } from '../../shared/uploads/index.ts'

/**
 * The upload session's state machine (spec 3.1) as one declared table: for each event, the
 * states it may start from and the state it leads to. Only session-states.ts writes a state,
 * and only a move this table allows; every other move is refused with the error of spec 7.1.
 */
export type UploadEvent = 'admit' | 'chunk' | 'lastChunk' | 'claim' | 'unclaim' | 'cancel' | 'expire' | 'fail'

/** `none`: no session yet (before admission). */
export type UploadFrom = UploadState | 'none'

export const UPLOAD_TRANSITIONS: { readonly [E in UploadEvent]: Readonly<Partial<Record<UploadFrom, UploadState>>> } = {
  // spec 3.1 row 1: uploadTemp chunk 0 (or tus creation) admitted by live resources.
  admit: { none: 'open' },
  // spec 3.1 row 3: chunk nextChunkIndex accepted (row 2, a resume, changes no state).
  chunk: { open: 'open' },
  // spec 3.1 row 4: all chunks received.
  lastChunk: { open: 'complete' },
  // spec 3.1 row 5: claimed by its consumer (PTaskDetectPic, a camera file, a restore …).
  claim: { complete: 'consumed' },
  // spec 4.7: only a successful claim consumes; a lease whose consumer failed gives it back.
  unclaim: { consumed: 'complete' },
  // spec 3.1 row 6: cancelUpload (or tus termination).
  cancel: { open: 'cancelled', complete: 'cancelled' },
  // spec 3.1 row 7 (idle, open) and the absolute timeout (open or complete).
  expire: { open: 'expired', complete: 'expired' },
  // spec 8: the stored bytes went missing, or the whole file's sha256 differs.
  fail: { open: 'failed' },
}

/** Ended sessions refuse every event with the error of their state (spec 7.1). */
const ENDED: Readonly<Partial<Record<UploadFrom, ErrorId>>> = {
  consumed: 'UPLOAD_CONSUMED', cancelled: 'UPLOAD_CANCELLED', expired: 'UPLOAD_EXPIRED', failed: 'UPLOAD_FAILED',
}

/** A live session refuses an event it cannot take with this error. */
const LIVE_REFUSAL: Readonly<Record<UploadEvent, ErrorId>> = {
  admit: 'TRANSFER_BUSY',
  chunk: 'UPLOAD_CHUNK_OUT_OF_ORDER',
  lastChunk: 'UPLOAD_CHUNK_OUT_OF_ORDER',
  claim: 'UPLOAD_NOT_COMPLETE',
  unclaim: 'TRANSFER_BUSY',
  cancel: 'TRANSFER_BUSY',
  expire: 'TRANSFER_BUSY',
  fail: 'TRANSFER_BUSY',
}

/** The states an event may start from. */
export const fromStates = (event: UploadEvent): UploadState[] =>
  (Object.keys(UPLOAD_TRANSITIONS[event]) as UploadFrom[]).filter((state): state is UploadState => state !== 'none')

/** The refusal of `event` in `from` (null when the table allows it). */
export function refusal(from: UploadFrom, event: UploadEvent, uploadId: string): ApiError | null {
  if (UPLOAD_TRANSITIONS[event][from] !== undefined) return null
  const details = { uploadId, state: from, event }
  if (from === 'none') return new ApiError('UPLOAD_NOT_FOUND', { details })
  return new ApiError(ENDED[from] ?? LIVE_REFUSAL[event], { details })
}

/** The state `event` leads to from `from`; throws the refusal when the table has no such move. */
export function nextUploadState(from: UploadFrom, event: UploadEvent, uploadId: string): UploadState {
  const refused = refusal(from, event, uploadId)
  if (refused) throw refused
  return UPLOAD_TRANSITIONS[event][from]!
}
