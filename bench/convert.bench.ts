/**
 * Raw inference time of each converted model: onnxruntime-node on the ONNX conversion vs
 * the same TF.js graph model on @tensorflow/tfjs's CPU backend (the baseline), measured in
 * one run on the same random input. Writes bench/out/convert.json (bench/lib/report.ts).
 *   npm run bench -- convert       (all models, after a build)
 *   npx tsx bench/convert.bench.ts [model ...]
 */
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import { resolveModelJson } from '../models/convert/build-models.ts'
import { convertTfGraph } from '../models/convert/convert.ts'
import { modelSources } from '../models/convert/sources.ts'
import { loadTfGraph } from '../models/convert/tfjs-graph.ts'
import { seededUniform } from '../models/convert/verify/compare.ts'
import { figure, writeReport } from './lib/report.ts'
import { measure } from './lib/timing.ts'
import { loadReferenceModel, runReference } from '../models/convert/verify/tfjs-reference.ts'

const root = join(import.meta.dirname, '..')
/** Each engine runs a model until this much time has passed (after one warm-up run), at least MIN_RUNS times. */
const BUDGET_MS = 4000
const MIN_RUNS = 1
const MAX_RUNS = 50
const BOUNDS = { warmup: 1, minRuns: MIN_RUNS, maxRuns: MAX_RUNS, budgetMs: BUDGET_MS }

const only = process.argv.slice(2)
const loadAtStart = loadavg()
const results = []
// A graph written in code has no package model.json: its agreement with its package's own code is test/convert/faceapi-resnet.integration.test.ts.
for (const source of modelSources.filter((s) => typeof s.modelJson === 'string' && (only.length === 0 || only.includes(s.name)))) {
  const graph = await loadTfGraph(resolveModelJson(source, root))
  const converted = convertTfGraph(graph, source.name)
  const input = converted.inputs[0]!
  const dims = input.dims.map((d) => (d < 0 ? 1 : d))
  const data = seededUniform(dims.reduce((a, b) => a * b, 1), 7)

  const session = await ort.InferenceSession.create(converted.onnx)
  const feeds = { [input.name]: new ort.Tensor('float32', data, dims) }
  const onnx = await measure(() => session.run(feeds), BOUNDS)
  await session.release()

  const reference = await loadReferenceModel(graph)
  const tfjs = await measure(() => runReference(reference, input.name, dims, data, converted.outputs), BOUNDS)
  reference.dispose()

  const row = { model: source.name, input: dims, onnxruntime: onnx, tfjsCpu: tfjs, speedup: Math.round((tfjs.medianMs / onnx.medianMs) * 10) / 10 }
  console.log(`${source.name.padEnd(14)} onnxruntime ${String(onnx.medianMs).padStart(8)} ms   tfjs-cpu ${String(tfjs.medianMs).padStart(9)} ms   ×${row.speedup}`)
  results.push(row)
}

// report contract of bench/lib/report.ts: one figure per model, onnxruntime vs the TF.js baseline
const file = await writeReport({
  benchmark: 'convert',
  description: 'TF.js graph models converted to ONNX: raw inference on onnxruntime-node vs the same TF.js model on @tensorflow/tfjs (CPU backend), batch 1, same random input, median after one warm-up',
  settings: {
    budgetMsPerEngineAndModel: BUDGET_MS,
    minRuns: MIN_RUNS,
    maxRuns: MAX_RUNS,
    onnxruntime: ort.env.versions.common,
    cpus: cpus().length,
    // other processes on the machine slow both engines alike; the load average tells how busy it was
    loadAverage1m: { start: loadAtStart[0], end: loadavg()[0] },
    perModel: results,
  },
  figures: results.map((r) =>
    figure({
      name: `${r.model} inference (median)`,
      unit: 'ms',
      value: r.onnxruntime.medianMs,
      baseline: { name: `${r.model} on @tensorflow/tfjs CPU`, value: r.tfjsCpu.medianMs },
      // the conversion is worth shipping only if onnxruntime beats the TF.js CPU backend
      target: { ratioAtMost: 1 },
    }),
  ),
})
console.log(`written ${file}`)
