/**
 * The dlib ResNet-29 face descriptor of @vladmandic/face-api (`face_recognition_model`) as a
 * TF.js graph model, so that the project's converter (convert.ts) turns it into ONNX like
 * the other models. face-api ships only the weights (a TF.js weights manifest); the graph is
 * written here as face-api builds it in code (its src/faceRecognitionNet: FaceRecognitionNet,
 * convLayer, residualLayer, scaleLayer), node by node:
 *  - conv layer: Conv2D + bias, then the scale layer (× weights + biases), Relu when asked;
 *    stride 1 SAME, or stride 2 VALID for the "down" convolutions;
 *  - residual: conv → conv (no relu) → + input → relu;
 *  - residual down: conv/2 → conv, the input average-pooled 2 × 2 and padded with zero
 *    channels (and the conv output padded with a zero row and column when the pooled map is
 *    one larger) → sum → relu;
 *  - 7 × 7/2 conv, 3 × 3/2 max pool, 3 × res32, res64↓ + 3 × res64, res128↓ + 2 × res128,
 *    res256↓ + 2 × res256, res256↓, mean over the map, × fc [256, 128].
 * Input [n,150,150,3]: RGB minus the mean (122.782, 117.001, 104.298), divided by 255 (done by
 * the manifest's input normalization). Output `descriptor` [n,128].
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import type { TfModelJson, TfNode } from './tfjs-graph.ts'

/** face-api's weights manifest, package-relative. */
export const FACEAPI_RECOGNITION_MANIFEST = '@vladmandic/face-api/model/face_recognition_model-weights_manifest.json'
/** Input side of the network (face-api's toBatchTensor(150)). */
export const FACEAPI_RECOGNITION_SIZE = 150

interface WeightsGroup { paths: string[]; weights: { name: string; shape: number[]; dtype: string }[] }

const b64 = (s: string) => Buffer.from(s).toString('base64')
const ints = (xs: number[]) => ({ list: { i: xs.map(String) } })

/**
 * Writes `<outDir>/face-recognition-resnet.json` (+ a small shard of the graph's own integer
 * constants) whose weights are read from face-api's shard in place. Returns the model.json path.
 */
export async function writeFaceApiResnetGraph(projectRoot: string, outDir: string): Promise<string> {
  const manifestPath = createRequire(join(projectRoot, 'package.json')).resolve(FACEAPI_RECOGNITION_MANIFEST)
  const groups = JSON.parse(await readFile(manifestPath, 'utf8')) as WeightsGroup[]
  const shape = new Map(groups.flatMap((g) => g.weights.map((w) => [w.name, w.shape] as const)))
  const nodes: TfNode[] = [...shape.keys()].map((name) => ({ name, op: 'Const' }))
  nodes.push({ name: 'input', op: 'Placeholder', attr: { dtype: { type: 'DT_FLOAT' }, shape: { shape: { dim: [{ size: '-1' }, { size: String(FACEAPI_RECOGNITION_SIZE) }, { size: String(FACEAPI_RECOGNITION_SIZE) }, { size: '3' }] } } } })
  // The graph's own constants (int32): paddings and the mean's axes.
  const own: { name: string; shape: number[]; values: number[] }[] = [{ name: 'mean_axes', shape: [2], values: [1, 2] }]
  const add = (node: TfNode) => { nodes.push(node); return node.name }

  const convLayer = (x: string, prefix: string, down: boolean, relu: boolean) => {
    const conv = add({ name: `${prefix}/conv2d`, op: 'Conv2D', input: [x, `${prefix}/conv/filters`], attr: { strides: ints(down ? [1, 2, 2, 1] : [1, 1, 1, 1]), padding: { s: b64(down ? 'VALID' : 'SAME') }, dilations: ints([1, 1, 1, 1]), data_format: { s: b64('NHWC') } } })
    const biased = add({ name: `${prefix}/bias_add`, op: 'Add', input: [conv, `${prefix}/conv/bias`] })
    const scaled = add({ name: `${prefix}/scale_mul`, op: 'Mul', input: [biased, `${prefix}/scale/weights`] })
    const shifted = add({ name: `${prefix}/scale_add`, op: 'Add', input: [scaled, `${prefix}/scale/biases`] })
    return relu ? add({ name: `${prefix}/relu`, op: 'Relu', input: [shifted] }) : shifted
  }
  const outSize = (size: number, kernel: number, stride: number) => Math.floor((size - kernel) / stride) + 1
  const residual = (x: string, prefix: string) => {
    const out = convLayer(convLayer(x, `${prefix}/conv1`, false, true), `${prefix}/conv2`, false, false)
    return add({ name: `${prefix}/relu`, op: 'Relu', input: [add({ name: `${prefix}/add`, op: 'Add', input: [out, x] })] })
  }
  const residualDown = (x: string, prefix: string, size: number, channels: number) => {
    let out = convLayer(convLayer(x, `${prefix}/conv1`, true, true), `${prefix}/conv2`, false, false)
    const outChannels = shape.get(`${prefix}/conv2/conv/filters`)![3]!
    const convSize = outSize(size, shape.get(`${prefix}/conv1/conv/filters`)![0]!, 2)
    const pooledSize = outSize(size, 2, 2)
    let pooled = add({ name: `${prefix}/avg_pool`, op: 'AvgPool', input: [x], attr: { ksize: ints([1, 2, 2, 1]), strides: ints([1, 2, 2, 1]), padding: { s: b64('VALID') }, data_format: { s: b64('NHWC') } } })
    if (pooledSize !== convSize) {
      const extra = pooledSize - convSize
      own.push({ name: `${prefix}/out_paddings`, shape: [4, 2], values: [0, 0, 0, extra, 0, extra, 0, 0] })
      out = add({ name: `${prefix}/out_pad`, op: 'Pad', input: [out, `${prefix}/out_paddings`] })
    }
    if (outChannels !== channels) {
      own.push({ name: `${prefix}/pool_paddings`, shape: [4, 2], values: [0, 0, 0, 0, 0, 0, 0, outChannels - channels] })
      pooled = add({ name: `${prefix}/pool_pad`, op: 'Pad', input: [pooled, `${prefix}/pool_paddings`] })
    }
    return { out: add({ name: `${prefix}/relu`, op: 'Relu', input: [add({ name: `${prefix}/add`, op: 'Add', input: [pooled, out] })] }), size: pooledSize, channels: outChannels }
  }

  let x = convLayer('input', 'conv32_down', true, true)
  let size = outSize(FACEAPI_RECOGNITION_SIZE, shape.get('conv32_down/conv/filters')![0]!, 2)
  x = add({ name: 'max_pool', op: 'MaxPool', input: [x], attr: { ksize: ints([1, 3, 3, 1]), strides: ints([1, 2, 2, 1]), padding: { s: b64('VALID') }, data_format: { s: b64('NHWC') } } })
  size = outSize(size, 3, 2)
  let channels = 32
  for (const block of ['conv32_1', 'conv32_2', 'conv32_3', 'conv64_down', 'conv64_1', 'conv64_2', 'conv64_3', 'conv128_down', 'conv128_1', 'conv128_2', 'conv256_down', 'conv256_1', 'conv256_2', 'conv256_down_out']) {
    if (block.includes('_down')) ({ out: x, size, channels } = residualDown(x, block, size, channels))
    else x = residual(x, block)
  }
  const mean = add({ name: 'global_avg', op: 'Mean', input: [x, 'mean_axes'], attr: { keep_dims: { b: false }, Tidx: { type: 'DT_INT32' } } })
  add({ name: 'descriptor', op: 'MatMul', input: [mean, 'fc'], attr: { transpose_a: { b: false }, transpose_b: { b: false } } })
  nodes.push(...own.map((c) => ({ name: c.name, op: 'Const' })))

  await mkdir(outDir, { recursive: true })
  const ownBin = join(outDir, 'face-recognition-resnet-consts.bin')
  await writeFile(ownBin, Buffer.from(Int32Array.from(own.flatMap((c) => c.values)).buffer))
  const json: TfModelJson = {
    format: 'graph-model',
    modelTopology: { node: nodes },
    weightsManifest: [
      ...groups.map((g) => ({ ...g, paths: g.paths.map((p) => relative(outDir, join(dirname(manifestPath), p))) })),
      { paths: ['face-recognition-resnet-consts.bin'], weights: own.map((c) => ({ name: c.name, shape: c.shape, dtype: 'int32' })) },
    ] as TfModelJson['weightsManifest'],
    signature: { inputs: { input: { name: 'input:0' } }, outputs: { descriptor: { name: 'descriptor:0' } } },
  }
  const path = join(outDir, 'face-recognition-resnet.json')
  await writeFile(path, JSON.stringify(json))
  return path
}
