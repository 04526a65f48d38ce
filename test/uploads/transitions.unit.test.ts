import { describe, expect, it } from 'vitest'
import type { UploadState } from '../../shared/uploads/index.ts'
import { fromStates, nextUploadState, refusal, UPLOAD_TRANSITIONS, type UploadEvent, type UploadFrom } from '../../runtime/uploads/transitions.ts'

// spec 3.1, written out by hand: every (state, event) pair and where it leads, or the error that refuses it.
const STATES: UploadFrom[] = ['none', 'open', 'complete', 'consumed', 'cancelled', 'expired', 'failed']
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

describe('upload session transition table (spec 3.1)', () => {
  it('declares exactly the moves of spec 3.1 (and the lease undo of spec 4.7)', () => {
    expect(UPLOAD_TRANSITIONS).toEqual(EXPECTED)
  })

  for (const event of Object.keys(EXPECTED) as UploadEvent[]) {
    for (const from of STATES) {
      const to = EXPECTED[event][from]
      if (to !== undefined) {
        it(`${from} --${event}--> ${to}`, () => {
          expect(nextUploadState(from, event, 'u1')).toBe(to)
          expect(refusal(from, event, 'u1')).toBeNull()
        })
      } else {
        const key = from === 'none' ? 'api.error.uploadNotFound' : ENDED_KEY[from] ?? LIVE_KEY[event]
        it(`${from} --${event}--> refused with ${key}`, () => {
          let thrown: unknown
          try { nextUploadState(from, event, 'u1') } catch (error) { thrown = error }
          expect(thrown).toMatchObject({ item: { messageKey: key, details: { uploadId: 'u1', state: from, event } } })
        })
      }
    }
  }

  it('lists the states each event may start from', () => {
    expect(fromStates('cancel')).toEqual(['open', 'complete'])
    expect(fromStates('admit')).toEqual([])
    expect(fromStates('claim')).toEqual(['complete'])
  })
})
