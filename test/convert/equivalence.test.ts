/**
 * The ONNX conversion of every model in models/convert/sources.ts computes what the TF.js
 * model computes: the same inputs through @tensorflow/tfjs (CPU backend) and through
 * onnxruntime-node agree within 1e-3 absolute or 1e-4 relative on every output value.
 */
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { resolveModelJson } from '../../models/convert/build-models.ts'
import { convertTfGraph } from '../../models/convert/convert.ts'
import { modelSources } from '../../models/convert/sources.ts'
import { loadTfGraph } from '../../models/convert/tfjs-graph.ts'
import { firstMismatch, seededUniform } from '../../models/convert/verify/compare.ts'
import { loadReferenceModel, runReference } from '../../models/convert/verify/tfjs-reference.ts'

const root = join(import.meta.dirname, '../..')
const samplePhoto = join(root, 'node_modules/@vladmandic/face-api/demo/sample1.jpg')

/** A real photo as [1, h, w, 3] floats in [0, 1]. */
async function photoInput(h: number, w: number): Promise<Float32Array> {
  const rgb = await sharp(samplePhoto).resize(w, h, { fit: 'fill' }).removeAlpha().raw().toBuffer()
  return Float32Array.from(rgb, (v) => v / 255)
}

async function checkEquivalence(name: string, makeInput: (dims: number[]) => Promise<Float32Array> | Float32Array, batch: number) {
  const source = modelSources.find((s) => s.name === name)!
  const graph = await loadTfGraph(resolveModelJson(source, root))
  const converted = convertTfGraph(graph, name)
  const [input] = converted.inputs
  const dims = input!.dims.map((d, i) => (d < 0 && i === 0 ? batch : d))
  const data = await makeInput(dims)

  const expected = await runReference(await loadReferenceModel(graph), input!.name, dims, data, converted.outputs)
  const session = await ort.InferenceSession.create(converted.onnx)
  const actual = await session.run({ [input!.name]: new ort.Tensor('float32', data, dims) })
  await session.release()

  expect(converted.outputs.length).toBeGreaterThan(0)
  converted.outputs.forEach((output, i) => {
    const got = actual[output]!
    expect({ output, dims: got.dims }).toEqual({ output, dims: expected[i]!.dims })
    expect({ output, mismatch: firstMismatch(expected[i]!.data, got.data as Float32Array) }).toEqual({ output, mismatch: undefined })
  })
  return { expected, converted }
}

const random = (seed: number) => (dims: number[]) => seededUniform(dims.reduce((a, b) => a * b, 1), seed)

describe('TF.js → ONNX conversion agrees with TF.js on random inputs', () => {
  for (const [i, source] of modelSources.entries()) {
    // models with a free batch dimension run a batch of 2, which also checks that the batch stays free
    it(source.name, async () => {
      await checkEquivalence(source.name, random(1000 + i), 2)
    })
  }
})

describe('TF.js → ONNX conversion agrees with TF.js on a photo', () => {
  // on noise the person mask is all ~0, so the segmentation model is also checked on people
  it('selfie', async () => {
    const { expected } = await checkEquivalence('selfie', (dims) => photoInput(dims[1]!, dims[2]!), 1)
    const mask = expected[0]!.data
    expect(mask.filter((v) => v > 0.5).length).toBeGreaterThan(mask.length * 0.05)
  })
})
