/**
 * face-api's 68-point landmark network written as a graph from its weights
 * (models/convert/faceapi-landmarks.ts) and converted to ONNX computes what face-api's own
 * FaceLandmark68Net computes (its code, its TF.js, CPU backend) on the same face-sized input.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import { afterAll, describe, expect, it } from 'vitest'
import { convertTfGraph } from '../../models/convert/convert.ts'
import { FACEAPI_LANDMARKS_MANIFEST, FACEAPI_LANDMARKS_SIZE, writeFaceApiLandmarksGraph } from '../../models/convert/faceapi-landmarks.ts'
import { loadTfGraph } from '../../models/convert/tfjs-graph.ts'
import { firstMismatch, seededUniform } from '../../models/convert/verify/compare.ts'

const root = join(import.meta.dirname, '../..')
const require = createRequire(join(root, 'package.json'))
const out = mkdtempSync(join(tmpdir(), 'faceapi-landmarks-'))
afterAll(() => rmSync(out, { recursive: true, force: true }))

/** face-api's input normalization (FaceFeatureExtractor.forwardInput): RGB minus this mean, / 255. */
const MEAN_RGB = [122.782, 117.001, 104.298]

describe('68-point face landmarks (face-api weights) → ONNX', () => {
  it('agrees with face-api\'s FaceLandmark68Net on a 112 × 112 input', async () => {
    const size = FACEAPI_LANDMARKS_SIZE
    const pixels = Float32Array.from(seededUniform(size * size * 3, 68), (v) => Math.floor(v * 256))

    const faceapi = require('@vladmandic/face-api/dist/face-api.node-wasm.js')
    const tf = faceapi.tf
    await tf.setBackend('cpu')
    await tf.ready()
    const manifestPath = require.resolve(FACEAPI_LANDMARKS_MANIFEST)
    const groups = require(manifestPath) as { paths: string[]; weights: unknown[] }[]
    const bin = readFileSync(join(manifestPath, '..', groups[0]!.paths[0]!))
    const net = new faceapi.FaceLandmark68Net()
    net.loadFromWeightMap(tf.io.decodeWeights(bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength), groups[0]!.weights))
    const input = tf.tensor4d(pixels, [1, size, size, 3])
    // runNet: the feature extractor and the fc layer, before face-api's post-processing
    // (which only maps the [0, 1] square onto the original image).
    const expected = await net.runNet(await faceapi.toNetInput(input)).data() as Float32Array
    input.dispose()

    const converted = convertTfGraph(await loadTfGraph(await writeFaceApiLandmarksGraph(root, out)), 'face-landmarks-68')
    expect(converted.inputs.map((i) => i.dims)).toEqual([[-1, size, size, 3]])
    const session = await ort.InferenceSession.create(converted.onnx)
    const normalized = Float32Array.from(pixels, (v, i) => (v - MEAN_RGB[i % 3]!) / 255)
    const result = await session.run({ [converted.inputs[0]!.name]: new ort.Tensor('float32', normalized, [1, size, size, 3]) })
    await session.release()
    const actual = result[converted.outputs[0]!]!
    expect(actual.dims).toEqual([1, 136])
    expect(firstMismatch(expected, actual.data as Float32Array)).toBeUndefined()
  }, 180_000)
})
