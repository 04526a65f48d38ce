/** The ONNX conversion of the COCO detector computes what the TF.js model computes (helper: ./equivalence.ts). */
import { describe, it } from 'vitest'
import { expectEquivalent, randomInput } from './equivalence.ts'

// TF.js's pure-JavaScript CPU backend needs ~25 s for one 512 px detector pass on a free core
const TIMEOUT_MS = 300_000

describe('TF.js → ONNX conversion agrees with TF.js on random inputs', () => {
  it('centernet', async () => {
    await expectEquivalent('centernet', randomInput(2002))
  }, TIMEOUT_MS)
})
