/** The ONNX conversion of the COCO detectors computes what the TF.js model computes (helper: ./equivalence.ts). */
import { describe, it } from 'vitest'
import { expectEquivalent, randomInput } from './equivalence.ts'

// TF.js's pure-JavaScript CPU backend needs ~25 s for one 416/512 px detector pass on a free core
const TIMEOUT_MS = 300_000

describe('TF.js → ONNX conversion agrees with TF.js on random inputs', () => {
  it('nanodet', async () => {
    await expectEquivalent('nanodet', randomInput(2001))
  }, TIMEOUT_MS)

  it('centernet', async () => {
    await expectEquivalent('centernet', randomInput(2002))
  }, TIMEOUT_MS)
})
