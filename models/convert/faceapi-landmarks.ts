/**
 * face-api's 68-point face landmark network (@vladmandic/face-api `face_landmark_68_model`,
 * FaceLandmark68Net) as a TF.js graph model, so that the project's converter (convert.ts) turns
 * it into ONNX like the other models. face-api ships only the weights; the graph is written
 * here as face-api builds it in code (its src/faceFeatureExtractor/FaceFeatureExtractor,
 * denseBlock4, common/depthwiseSeparableConv, faceProcessor/FaceProcessor):
 *  - dense block: conv0 (dense0: 3 × 3/2 convolution + bias; the others: separable 3 × 3/2
 *    + bias) → relu = out1; out2 = sep(out1); out3 = sep(relu(out1 + out2));
 *    out4 = sep(relu(out1 + out2 + out3)); relu(out1 + out2 + out3 + out4); separable
 *    convolutions are stride 1 SAME unless said (depthwise 3 × 3, then pointwise 1 × 1, + bias);
 *  - four dense blocks (112 → 56 → 28 → 14 → 7), a 7 × 7 average pool (the whole map: written
 *    as the mean over it), × fc weights + fc bias.
 * Input [n,112,112,3]: the face square, RGB minus the mean (122.782, 117.001, 104.298), / 255
 * (the recognizer's landmark input normalization). Output `landmarks` [n,136]: x0, y0, x1, y1, …
 * as fractions of the input square (iBUG 300-W order: jaw 0–16, brows 17–26, nose 27–35,
 * eyes 36–47, mouth 48–67).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import type { TfModelJson, TfNode } from './tfjs-graph.ts'

/** face-api's weights manifest, package-relative. */
export const FACEAPI_LANDMARKS_MANIFEST = '@vladmandic/face-api/model/face_landmark_68_model-weights_manifest.json'
/** Input side of the network (face-api's toBatchTensor(112, true)). */
export const FACEAPI_LANDMARKS_SIZE = 112

interface WeightsGroup { paths: string[]; weights: { name: string; shape: number[]; dtype: string }[] }

const b64 = (s: string) => Buffer.from(s).toString('base64')
const ints = (xs: number[]) => ({ list: { i: xs.map(String) } })

/**
 * Writes `<outDir>/face-landmarks-68.json` (+ a small shard of the graph's own integer
 * constants) whose weights are read from face-api's shard in place. Returns the model.json path.
 */
export async function writeFaceApiLandmarksGraph(projectRoot: string, outDir: string): Promise<string> {
  const manifestPath = createRequire(join(projectRoot, 'package.json')).resolve(FACEAPI_LANDMARKS_MANIFEST)
  const groups = JSON.parse(await readFile(manifestPath, 'utf8')) as WeightsGroup[]
  const names = groups.flatMap((g) => g.weights.map((w) => w.name))
  const nodes: TfNode[] = names.map((name) => ({ name, op: 'Const' }))
  nodes.push({ name: 'input', op: 'Placeholder', attr: { dtype: { type: 'DT_FLOAT' }, shape: { shape: { dim: [{ size: '-1' }, { size: String(FACEAPI_LANDMARKS_SIZE) }, { size: String(FACEAPI_LANDMARKS_SIZE) }, { size: '3' }] } } } })
  const own: { name: string; shape: number[]; values: number[] }[] = [{ name: 'mean_axes', shape: [2], values: [1, 2] }]
  const add = (node: TfNode) => { nodes.push(node); return node.name }
  const convAttr = (stride: number) => ({ strides: ints([1, stride, stride, 1]), padding: { s: b64('SAME') }, dilations: ints([1, 1, 1, 1]), data_format: { s: b64('NHWC') } })

  const separable = (x: string, prefix: string, stride: number) => {
    const depthwise = add({ name: `${prefix}/depthwise`, op: 'DepthwiseConv2dNative', input: [x, `${prefix}/depthwise_filter`], attr: convAttr(stride) })
    const pointwise = add({ name: `${prefix}/pointwise`, op: 'Conv2D', input: [depthwise, `${prefix}/pointwise_filter`], attr: convAttr(1) })
    return add({ name: `${prefix}/bias_add`, op: 'Add', input: [pointwise, `${prefix}/bias`] })
  }
  const relu = (x: string) => add({ name: `${x}/relu`, op: 'Relu', input: [x] })
  const sum = (name: string, xs: string[]) => xs.slice(1).reduce((acc, x, i) => add({ name: `${name}/add${i}`, op: 'Add', input: [acc, x] }), xs[0]!)
  const denseBlock = (x: string, prefix: string, first: boolean) => {
    const conv0 = first
      ? add({ name: `${prefix}/conv0/bias_add`, op: 'Add', input: [add({ name: `${prefix}/conv0/conv`, op: 'Conv2D', input: [x, `${prefix}/conv0/filters`], attr: convAttr(2) }), `${prefix}/conv0/bias`] })
      : separable(x, `${prefix}/conv0`, 2)
    const out1 = relu(conv0)
    const out2 = separable(out1, `${prefix}/conv1`, 1)
    const out3 = separable(relu(sum(`${prefix}/in3`, [out1, out2])), `${prefix}/conv2`, 1)
    const out4 = separable(relu(sum(`${prefix}/in4`, [out1, out2, out3])), `${prefix}/conv3`, 1)
    return relu(sum(`${prefix}/out`, [out1, out2, out3, out4]))
  }

  let x = 'input'
  for (const [i, prefix] of ['dense0', 'dense1', 'dense2', 'dense3'].entries()) x = denseBlock(x, prefix, i === 0)
  const pooled = add({ name: 'global_avg', op: 'Mean', input: [x, 'mean_axes'], attr: { keep_dims: { b: false }, Tidx: { type: 'DT_INT32' } } })
  const fc = add({ name: 'fc/matmul', op: 'MatMul', input: [pooled, 'fc/weights'], attr: { transpose_a: { b: false }, transpose_b: { b: false } } })
  add({ name: 'landmarks', op: 'Add', input: [fc, 'fc/bias'] })
  nodes.push(...own.map((c) => ({ name: c.name, op: 'Const' })))

  await mkdir(outDir, { recursive: true })
  await writeFile(join(outDir, 'face-landmarks-68-consts.bin'), Buffer.from(Int32Array.from(own.flatMap((c) => c.values)).buffer))
  const json: TfModelJson = {
    format: 'graph-model',
    modelTopology: { node: nodes },
    weightsManifest: [
      ...groups.map((g) => ({ ...g, paths: g.paths.map((p) => relative(outDir, join(dirname(manifestPath), p))) })),
      { paths: ['face-landmarks-68-consts.bin'], weights: own.map((c) => ({ name: c.name, shape: c.shape, dtype: 'int32' })) },
    ] as TfModelJson['weightsManifest'],
    signature: { inputs: { input: { name: 'input:0' } }, outputs: { landmarks: { name: 'landmarks:0' } } },
  }
  const path = join(outDir, 'face-landmarks-68.json')
  await writeFile(path, JSON.stringify(json))
  return path
}
