/**
 * The ONNX conversion of the COCO detector computes what the TF.js model computes (helper:
 * ./equivalence.ts), and so does the image descriptor built on its backbone.
 */
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { resolveModelJson } from '../../models/convert/build-models.ts'
import { convertTfGraph, DESCRIPTOR_OUTPUT } from '../../models/convert/convert.ts'
import { modelSources } from '../../models/convert/sources.ts'
import { loadTfGraph } from '../../models/convert/tfjs-graph.ts'
import { firstMismatch } from '../../models/convert/verify/compare.ts'
import { loadReferenceModel, runReference } from '../../models/convert/verify/tfjs-reference.ts'
import { expectEquivalent, randomInput } from './equivalence.ts'

const root = join(import.meta.dirname, '../..')
const samplePhoto = join(root, 'node_modules/@vladmandic/face-api/demo/sample1.jpg')

// TF.js's pure-JavaScript CPU backend needs ~25 s for one 512 px detector pass on a free core
const TIMEOUT_MS = 300_000

describe('TF.js → ONNX conversion agrees with TF.js on random inputs', () => {
  it('centernet', async () => {
    await expectEquivalent('centernet', randomInput(2002))
  }, TIMEOUT_MS)
})

describe('image descriptor head (models/convert/convert.ts DescriptorHead)', () => {
  const l2 = (v: Float32Array) => { const n = Math.hypot(...v) || 1; return v.map((x) => x / n) }

  it('image-descriptor: the backbone\'s features of a photo and its mirror, mean-pooled and normalized as TF.js computes them; any input size', async () => {
    const source = modelSources.find((s) => s.name === 'image-descriptor')!
    const graph = await loadTfGraph(resolveModelJson(source, root))
    const converted = convertTfGraph(graph, source.name, source.descriptor)
    expect(converted.outputs).toEqual([DESCRIPTOR_OUTPUT])
    expect(converted.inputs).toEqual([{ name: 'tower_0/images', dims: [1, -1, -1, 3], dtype: 'DT_FLOAT' }])
    const photo = sharp(samplePhoto).resize(512, 512, { fit: 'fill' }).removeAlpha()
    const pixels = Float32Array.from(await photo.clone().raw().toBuffer())
    const mirrored = Float32Array.from(await photo.clone().flop().raw().toBuffer())

    // The reference: TF.js's feature maps of both images, each averaged over its positions, the
    // two added, L2-normalized per map, concatenated, normalized again.
    const reference = await loadReferenceModel(graph)
    const maps = [await runReference(reference, 'tower_0/images', [1, 512, 512, 3], pixels, source.descriptor!.features),
      await runReference(reference, 'tower_0/images', [1, 512, 512, 3], mirrored, source.descriptor!.features)]
    reference.dispose()
    const parts = source.descriptor!.features.map((_, f) => {
      const channels = maps[0]![f]!.dims[3]!
      const sum = new Float32Array(channels)
      for (const run of maps) {
        const { data } = run[f]!
        for (let i = 0; i < data.length; i++) sum[i % channels]! += data[i]! / (data.length / channels)
      }
      return l2(sum)
    })
    const expected = l2(Float32Array.from(parts.flatMap((p) => [...p])))
    expect(expected).toHaveLength(600)

    const session = await ort.InferenceSession.create(converted.onnx)
    try {
      const run = async (data: Float32Array, h: number, w: number) =>
        (await session.run({ 'tower_0/images': new ort.Tensor('float32', data, [1, h, w, 3]) }))[DESCRIPTOR_OUTPUT]!
      const actual = await run(pixels, 512, 512)
      expect(actual.dims).toEqual([1, 600])
      expect(firstMismatch(expected, actual.data as Float32Array)).toBeUndefined()
      // Another size (a person crop's 128 × 256): the mirror gives the same descriptor.
      const tall = sharp(samplePhoto).resize(128, 256, { fit: 'fill' }).removeAlpha()
      const a = await run(Float32Array.from(await tall.clone().raw().toBuffer()), 256, 128)
      const b = await run(Float32Array.from(await tall.clone().flop().raw().toBuffer()), 256, 128)
      expect(firstMismatch(a.data as Float32Array, b.data as Float32Array)).toBeUndefined()
    } finally {
      await session.release()
    }
  }, TIMEOUT_MS)
})
