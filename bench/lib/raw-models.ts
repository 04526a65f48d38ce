/**
 * Raw inference time of one model of a pipeline: onnxruntime-node `session.run` on the file
 * the device loads (same session options as the sidecar's SessionPool), and, for a model the
 * build converted from TF.js (models/convert/sources.ts), the same TF.js graph model on
 * @tensorflow/tfjs's pure-JavaScript CPU backend, fed the same tensor. Models that ship as
 * ONNX (or that an operator uploads) have no TF.js twin: their baseline is null, never faked.
 */
import * as ort from 'onnxruntime-node'
import { resolveModelJson } from '../../models/convert/build-models.ts'
import { modelSources } from '../../models/convert/sources.ts'
import { loadTfGraph } from '../../models/convert/tfjs-graph.ts'
import { loadReferenceModel, runReference } from '../../models/convert/verify/tfjs-reference.ts'
import type { ModelSource } from '../../models/manifest-schema.ts'
import { SessionPool } from '../../runtime/sidecar/session-pool.ts'
import { measure, type RunBounds, type Timing } from './timing.ts'

export interface RawModelInput {
  /** Input name; undefined = the model's first input (as the pipeline does). */
  name: string | undefined
  dims: number[]
  data: Float32Array
}

export interface RawModelTiming {
  /** Where the model comes from: `build:<name>` (converted from TF.js), `package:<pkg>/<file>`, `algorithm-package:<path>` or `uploaded:<id>`. */
  source: string
  input: number[]
  onnxruntime: Timing
  /** The TF.js twin on the CPU backend; null when the model ships as ONNX (no TF.js original). */
  tfjsCpu: Timing | null
  /** Largest |ONNX − TF.js| over the first output on this input (the two run the same graph). */
  maxAbsDiff: number | null
  /** Why there is no TF.js baseline; null when there is one. */
  note: string | null
}

export function describeSource(source: ModelSource): string {
  if ('build' in source) return `build:${source.build}`
  if ('package' in source) return `package:${source.package}/${source.file}`
  if ('path' in source) return `algorithm-package:${source.path}`
  return `uploaded:${source.uploaded}`
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let max = 0
  for (let i = 0; i < Math.min(a.length, b.length); i++) max = Math.max(max, Math.abs(Number(a[i]) - Number(b[i])))
  return max
}

export async function measureRawModel(options: {
  file: string
  source: ModelSource
  input: RawModelInput
  projectRoot: string
  intraOpThreads: number
  onnxBounds: RunBounds
  tfjsBounds: RunBounds
}): Promise<RawModelTiming> {
  const { file, source, input, projectRoot } = options
  const pool = new SessionPool({ intraOpThreads: options.intraOpThreads })
  const lease = await pool.acquire(file)
  const inputName = input.name ?? lease.session.inputNames[0]!
  const outputs = [...lease.session.outputNames]
  const feeds = { [inputName]: new ort.Tensor('float32', input.data, input.dims) }
  let onnx: Timing
  let onnxFirst: ArrayLike<number>
  try {
    onnxFirst = (await lease.session.run(feeds))[outputs[0]!]!.data as Float32Array
    onnx = await measure(() => lease.session.run(feeds), options.onnxBounds)
  } finally {
    await lease.release()
  }

  const converted = 'build' in source ? modelSources.find((s) => s.name === source.build) : undefined
  if (!converted || typeof converted.modelJson !== 'string') {
    const note = converted ? 'graph written in code from a package\'s weights: no TF.js model.json, ONNX time only' : 'package' in source ? 'ships as ONNX: no TF.js twin, ONNX time only' : 'operator-uploaded ONNX model: no TF.js twin, ONNX time only'
    return { source: describeSource(source), input: input.dims, onnxruntime: onnx, tfjsCpu: null, maxAbsDiff: null, note }
  }

  // The converted ONNX keeps the TF.js tensor names for its inputs and outputs (models/convert/convert.ts).
  const reference = await loadReferenceModel(await loadTfGraph(resolveModelJson(converted, projectRoot)))
  try {
    const first = await runReference(reference, inputName, input.dims, input.data, outputs)
    const tfjs = await measure(() => runReference(reference, inputName, input.dims, input.data, outputs), options.tfjsBounds)
    return { source: describeSource(source), input: input.dims, onnxruntime: onnx, tfjsCpu: tfjs, maxAbsDiff: +maxAbsDiff(first[0]!.data, onnxFirst).toPrecision(3), note: null }
  } finally {
    reference.dispose()
  }
}
