/**
 * The dlib ResNet face descriptor written as a graph from face-api's weights
 * (models/convert/faceapi-resnet.ts) and converted to ONNX computes what face-api's own
 * FaceRecognitionNet computes (its code, its TF.js, CPU backend) on the same face-sized input.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import { afterAll, describe, expect, it } from 'vitest'
import { convertTfGraph } from '../../models/convert/convert.ts'
import { FACEAPI_RECOGNITION_MANIFEST, FACEAPI_RECOGNITION_SIZE, writeFaceApiResnetGraph } from '../../models/convert/faceapi-resnet.ts'
import { loadTfGraph } from '../../models/convert/tfjs-graph.ts'
import { firstMismatch, seededUniform } from '../../models/convert/verify/compare.ts'

const root = join(import.meta.dirname, '../..')
const require = createRequire(join(root, 'package.json'))
const out = mkdtempSync(join(tmpdir(), 'faceapi-resnet-'))
afterAll(() => rmSync(out, { recursive: true, force: true }))

/** face-api's input normalization (FaceRecognitionNet.forwardInput): RGB minus this mean, / 255. */
const MEAN_RGB = [122.782, 117.001, 104.298]

describe('dlib ResNet (face-api weights) → ONNX', () => {
  it('agrees with face-api\'s FaceRecognitionNet on a 150 × 150 input', async () => {
    const size = FACEAPI_RECOGNITION_SIZE
    const pixels = Float32Array.from(seededUniform(size * size * 3, 31), (v) => Math.floor(v * 256))

    // face-api's network with its weights, in its own TF.js (CPU backend).
    const faceapi = require('@vladmandic/face-api/dist/face-api.node-wasm.js')
    const tf = faceapi.tf
    await tf.setBackend('cpu')
    await tf.ready()
    const manifestPath = require.resolve(FACEAPI_RECOGNITION_MANIFEST)
    const groups = require(manifestPath) as { paths: string[]; weights: unknown[] }[]
    const bin = readFileSync(join(manifestPath, '..', groups[0]!.paths[0]!))
    const net = new faceapi.FaceRecognitionNet()
    net.loadFromWeightMap(tf.io.decodeWeights(bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength), groups[0]!.weights))
    const input = tf.tensor4d(pixels, [1, size, size, 3])
    const expected = await net.forwardInput(await faceapi.toNetInput(input)).data() as Float32Array
    input.dispose()

    const converted = convertTfGraph(await loadTfGraph(await writeFaceApiResnetGraph(root, out)), 'face-recognition-resnet')
    expect(converted.inputs.map((i) => i.dims)).toEqual([[-1, size, size, 3]])
    const session = await ort.InferenceSession.create(converted.onnx)
    const normalized = Float32Array.from(pixels, (v, i) => (v - MEAN_RGB[i % 3]!) / 255)
    const result = await session.run({ [converted.inputs[0]!.name]: new ort.Tensor('float32', normalized, [1, size, size, 3]) })
    await session.release()
    const actual = result[converted.outputs[0]!]!
    expect(actual.dims).toEqual([1, 128])
    expect(firstMismatch(expected, actual.data as Float32Array)).toBeUndefined()
  }, 180_000)
})
