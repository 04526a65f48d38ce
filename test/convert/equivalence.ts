/**
 * Shared by the equivalence tests: converts a model of models/convert/sources.ts, runs the
 * same input through @tensorflow/tfjs (CPU backend) and onnxruntime-node, and checks that
 * every output value agrees within 1e-3 absolute or 1e-4 relative.
 */
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import sharp from 'sharp'
import { expect } from 'vitest'
import { resolveModelJson } from '../../models/convert/build-models.ts'
import { convertTfGraph } from '../../models/convert/convert.ts'
import { modelSources } from '../../models/convert/sources.ts'
import { loadTfGraph } from '../../models/convert/tfjs-graph.ts'
import { firstMismatch, seededUniform } from '../../models/convert/verify/compare.ts'
import { loadReferenceModel, runReference } from '../../models/convert/verify/tfjs-reference.ts'

const root = join(import.meta.dirname, '../..')
const samplePhoto = join(root, 'node_modules/@vladmandic/face-api/demo/sample1.jpg')

export type InputMaker = (dims: number[]) => Promise<Float32Array> | Float32Array

/** Uniform [0, 1) noise, the same on every run. */
export const randomInput = (seed: number): InputMaker => (dims) => seededUniform(dims.reduce((a, b) => a * b, 1), seed)

/** A real photo stretched to the input's [1, h, w, 3], values in [0, 1]. */
export const photoInput: InputMaker = async (dims) => {
  const rgb = await sharp(samplePhoto).resize(dims[2]!, dims[1]!, { fit: 'fill' }).removeAlpha().raw().toBuffer()
  return Float32Array.from(rgb, (v) => v / 255)
}

/** Runs the check; returns the TF.js outputs for further assertions. `batch` fills a free batch dimension. */
export async function expectEquivalent(name: string, makeInput: InputMaker, batch = 1) {
  const source = modelSources.find((s) => s.name === name)
  if (!source) throw new Error(`no model ${name} in models/convert/sources.ts`)
  const graph = await loadTfGraph(resolveModelJson(source, root))
  const converted = convertTfGraph(graph, name)
  const [input] = converted.inputs
  const dims = input!.dims.map((d, i) => (d < 0 && i === 0 ? batch : d))
  const data = await makeInput(dims)

  const reference = await loadReferenceModel(graph)
  const expected = await runReference(reference, input!.name, dims, data, converted.outputs)
  reference.dispose()
  const session = await ort.InferenceSession.create(converted.onnx)
  const actual = await session.run({ [input!.name]: new ort.Tensor('float32', data, dims) })
  await session.release()

  expect(converted.outputs.length).toBeGreaterThan(0)
  converted.outputs.forEach((output, i) => {
    const got = actual[output]!
    expect({ output, dims: got.dims }).toEqual({ output, dims: expected[i]!.dims })
    expect({ output, mismatch: firstMismatch(expected[i]!.data, got.data as Float32Array) }).toEqual({ output, mismatch: undefined })
  })
  return expected
}
