/** The ONNX conversion of the COCO detectors computes what the TF.js model computes (helper: ./equivalence.ts). */
import { describe, it } from 'vitest'
import { expectEquivalent, randomInput } from './equivalence.ts'

describe('TF.js → ONNX conversion agrees with TF.js on random inputs', () => {
  it('nanodet', async () => {
    await expectEquivalent('nanodet', randomInput(2001))
  })

  it('centernet', async () => {
    await expectEquivalent('centernet', randomInput(2002))
  })
})
