/**
 * The ONNX conversion of the face and segmentation models computes what the TF.js model
 * computes (helper: ./equivalence.ts). The COCO detectors are in equivalence-detectors.integration.test.ts,
 * a file of their own so that the two halves run on both cores.
 */
import { describe, expect, it } from 'vitest'
import { expectEquivalent, photoInput, randomInput } from './equivalence.ts'

// the reference runs on TF.js's pure-JavaScript CPU backend: seconds per model on a free core
const TIMEOUT_MS = 180_000

describe('TF.js → ONNX conversion agrees with TF.js on random inputs', () => {
  for (const [i, name] of ['selfie', 'emotion', 'faceres'].entries()) {
    it(name, async () => {
      await expectEquivalent(name, randomInput(1000 + i))
    }, TIMEOUT_MS)
  }

  it('keeps a free batch dimension free (emotion, batch of 3)', async () => {
    const [scores] = await expectEquivalent('emotion', randomInput(77), 3)
    expect(scores!.dims).toEqual([3, 7])
  }, TIMEOUT_MS)
})

describe('TF.js → ONNX conversion agrees with TF.js on a photo', () => {
  // on noise the person mask is all ~0, so the segmentation model is also checked on people
  it('selfie', async () => {
    const [mask] = await expectEquivalent('selfie', photoInput)
    expect(mask!.data.filter((v) => v > 0.5).length).toBeGreaterThan(mask!.data.length * 0.05)
  }, TIMEOUT_MS)
})
