import { describe, expect, it } from 'vitest'
import type { UploadState } from '../../shared/uploads/index.ts'
import { fromStates, nextUploadState, refusal, UPLOAD_TRANSITIONS, type UploadEvent, type UploadFrom } from '../../runtime/uploads/transitions.ts'
import { transitionTableSuite } from '../helpers/transition-suite.ts'

// spec 3.1, written out by hand: every (state, event) pair and where it leads, or the error that refuses it.
const EXPECTED: Record<UploadEvent, Partial<Record<UploadFrom, UploadState>>> = {
  admit: { none: 'open' },
  chunk: { open: 'open' },
  lastChunk: { open: 'complete' },
  claim: { complete: 'consumed' },
  unclaim: { consumed: 'complete' },
  cancel: { open: 'cancelled', complete: 'cancelled' },
  expire: { open: 'expired', complete: 'expired' },
  fail: { open: 'failed' },
}
const ENDED_KEY: Partial<Record<UploadFrom, string>> = {
  consumed: 'api.error.uploadConsumed', cancelled: 'api.error.uploadCancelled', expired: 'api.error.uploadExpired', failed: 'api.error.uploadFailed',
}
const LIVE_KEY: Record<UploadEvent, string> = {
  admit: 'api.error.transferBusy', chunk: 'api.error.uploadChunkOutOfOrder', lastChunk: 'api.error.uploadChunkOutOfOrder',
  claim: 'api.error.uploadNotComplete', unclaim: 'api.error.transferBusy', cancel: 'api.error.transferBusy',
  expire: 'api.error.transferBusy', fail: 'api.error.transferBusy',
}

describe('upload session transition table (spec 3.1, and the lease undo of spec 4.7)', () => {
  transitionTableSuite({
    table: UPLOAD_TRANSITIONS, expected: EXPECTED, states: ['none', 'open', 'complete', 'consumed', 'cancelled', 'expired', 'failed'],
    next: (from, event) => nextUploadState(from, event, 'u1'),
    refusal: (from, event) => ({
      messageKey: from === 'none' ? 'api.error.uploadNotFound' : ENDED_KEY[from] ?? LIVE_KEY[event],
      details: { uploadId: 'u1', state: from, event },
    }),
    allowed: (from, event) => expect(refusal(from, event, 'u1')).toBeNull(),
  })

  it('lists the states each event may start from', () => {
    expect(fromStates('cancel')).toEqual(['open', 'complete'])
    expect(fromStates('admit')).toEqual([])
    expect(fromStates('claim')).toEqual(['complete'])
  })
})
