/**
 * Raw inference time of each converted model: onnxruntime-node on the ONNX conversion vs
 * the same TF.js graph model on @tensorflow/tfjs's CPU backend (the baseline), measured in
 * one run on the same random input. Writes bench/out/convert.json.
 *   npx tsx bench/convert.bench.ts [model ...]
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import { resolveModelJson } from '../models/convert/build-models.ts'
import { convertTfGraph } from '../models/convert/convert.ts'
import { modelSources } from '../models/convert/sources.ts'
import { loadTfGraph } from '../models/convert/tfjs-graph.ts'
import { seededUniform } from '../models/convert/verify/compare.ts'
import { loadReferenceModel, runReference } from '../models/convert/verify/tfjs-reference.ts'

const root = join(import.meta.dirname, '..')
/** Each engine runs a model until this much time has passed (after one warm-up run), at least MIN_RUNS times. */
const BUDGET_MS = 4000
const MIN_RUNS = 1
const MAX_RUNS = 50

interface Timing {
  runs: number
  medianMs: number
  meanMs: number
  minMs: number
}

async function measure(run: () => Promise<unknown>): Promise<Timing> {
  await run() // warm-up: first-run allocations, kernel selection
  const times: number[] = []
  const started = performance.now()
  while (times.length < MAX_RUNS && (times.length < MIN_RUNS || performance.now() - started < BUDGET_MS)) {
    const t0 = performance.now()
    await run()
    times.push(performance.now() - t0)
  }
  const sorted = [...times].sort((a, b) => a - b)
  const round = (v: number) => Math.round(v * 100) / 100
  return { runs: times.length, medianMs: round(sorted[Math.floor(sorted.length / 2)]!), meanMs: round(times.reduce((a, b) => a + b, 0) / times.length), minMs: round(sorted[0]!) }
}

const only = process.argv.slice(2)
// other processes on the machine slow both engines alike; the load average tells how busy it was
const loadAtStart = loadavg()
const results = []
for (const source of modelSources.filter((s) => only.length === 0 || only.includes(s.name))) {
  const graph = await loadTfGraph(resolveModelJson(source, root))
  const converted = convertTfGraph(graph, source.name)
  const input = converted.inputs[0]!
  const dims = input.dims.map((d) => (d < 0 ? 1 : d))
  const data = seededUniform(dims.reduce((a, b) => a * b, 1), 7)

  const session = await ort.InferenceSession.create(converted.onnx)
  const feeds = { [input.name]: new ort.Tensor('float32', data, dims) }
  const onnx = await measure(() => session.run(feeds))
  await session.release()

  const reference = await loadReferenceModel(graph)
  const tfjs = await measure(() => runReference(reference, input.name, dims, data, converted.outputs))
  reference.dispose()

  const row = { model: source.name, input: dims, onnxruntime: onnx, tfjsCpu: tfjs, speedup: Math.round((tfjs.medianMs / onnx.medianMs) * 10) / 10 }
  console.log(`${source.name.padEnd(14)} onnxruntime ${String(onnx.medianMs).padStart(8)} ms   tfjs-cpu ${String(tfjs.medianMs).padStart(9)} ms   ×${row.speedup}`)
  results.push(row)
}

const out = join(root, 'bench/out/convert.json')
await mkdir(join(root, 'bench/out'), { recursive: true })
await writeFile(
  out,
  JSON.stringify(
    {
      benchmark: 'TF.js graph model → ONNX conversion: raw inference, median of runs after one warm-up, batch 1',
      baseline: '@tensorflow/tfjs CPU backend (pure JavaScript) on the original TF.js model',
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version, onnxruntime: ort.env.versions.common, loadAverage1mAtStart: loadAtStart[0], loadAverage1mAtEnd: loadavg()[0] },
      date: new Date().toISOString(),
      results,
    },
    null,
    2,
  ) + '\n',
)
console.log(`written ${out}`)
