/**
 * The person detector under concurrent callers, in process (docs/cameras-and-stream-tasks.md "Detector scheduling"): why
 * throughput fell when every stream task sent its frame at once, and what batching would give.
 *
 *   (a) concurrency: C callers (1, 2, 4, 12) run the detector back to back on one shared
 *       session (as the sidecar's SessionPool shares it), onnxruntime intra-op threads T (1, 2),
 *       the sidecar's session options; inferences per second in all and p50 of one call.
 *       C = 12 with T = 2 is the previous configuration (one detection per stream task at
 *       once); C = 1 with T = 2 is one detection at a time (the stream scheduler's default).
 *   (b) batching: the detector's network up to its heads (`tower_0/wh`, `tower_0/keypoints`;
 *       the shipped model's post-processing reshapes to batch 1) converted with a free batch
 *       dimension, run at batch 1, 2 and 4: milliseconds per frame.
 * Accuracy beside speed: every setting of (a) finds the same persons on every frame (count of
 * score ≥ 0.25 person rows, the manifest's threshold) as one caller alone; (b) the heads of a
 * frame in a batch equal its heads alone (largest absolute difference).
 * Frames: 16 frames of one-by-one-person-detection.mp4 (../shared/media), letterboxed as the
 * manifest says. Run: `npx tsx bench/detector-concurrency.bench.ts` (under `flock
 * /work/bench.lock` on a shared machine) → bench/out/detector-concurrency.json.
 */
import { execFileSync } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import * as ort from 'onnxruntime-node'
import { convertTfGraph } from '../models/convert/convert.ts'
import { resolveModelJson } from '../models/convert/build-models.ts'
import { modelSources } from '../models/convert/sources.ts'
import { loadTfGraph } from '../models/convert/tfjs-graph.ts'
import type { DetectorNode, PipelineManifest } from '../models/manifest-schema.ts'
import { ffmpegBinary } from '../runtime/cameras/ffmpeg.ts'
import { prepareInput } from '../runtime/sidecar/pipeline/rgb-image.ts'
import { DEFAULT_RUN } from './capacity/defaults.ts'
import { figure, writeReport } from './lib/report.ts'
import manifestJson from '../models/manifests/person-detector.json' with { type: 'json' }

const root = path.resolve(import.meta.dirname, '..')
const manifest = manifestJson as unknown as PipelineManifest
const node = manifest.nodes.find((n) => n.action === 'detector') as DetectorNode
const SECONDS = Number(process.env.BENCH_DETECTOR_SECONDS ?? '12')
const CALLERS = [1, 2, 4, 12]
const THREADS = [1, 2]
const BATCHES = [1, 2, 4]

const options = (threads: number): ort.InferenceSession.SessionOptions => ({
  executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
  graphOptimizationLevel: 'all', logSeverityLevel: 3, extra: { session: { intra_op: { allow_spinning: '0' } } },
})

// 16 frames spread over the footage, 640 × 360 RGB (the stream tasks' analysis size is of this order).
const W = 640, H = 360, FRAMES = 16
const raw = execFileSync(ffmpegBinary(process.env.FFMPEG_PATH ?? ''), ['-v', 'error', '-i', DEFAULT_RUN.video, '-vf', `fps=${FRAMES / 139},scale=${W}:${H}`,
  '-frames:v', String(FRAMES), '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], { maxBuffer: 64 << 20 })
const inputs = await Promise.all(Array.from({ length: FRAMES }, (_, i) =>
  prepareInput({ data: raw.subarray(i * W * H * 3, (i + 1) * W * H * 3), width: W, height: H }, node.input)))
const tensor = (i: number) => new ort.Tensor('float32', inputs[i]!.data, inputs[i]!.dims)
const threshold = node.scoreThreshold ?? 0.25

const persons = (out: ort.InferenceSession.OnnxValueMapType) => {
  const d = out['tower_0/detections']!.data as Float32Array
  let n = 0
  for (let r = 0; r < d.length / 6; r++) if (d[r * 6 + 4]! >= threshold && d[r * 6 + 5] === 0) n++
  return n
}
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0

const centernet = path.join(root, 'dist/models/centernet.onnx')
const concurrency: { threads: number; callers: number; inferencesPerSecond: number; p50Ms: number; personsPerFrame: number[] }[] = []
for (const threads of THREADS) {
  const session = await ort.InferenceSession.create(centernet, options(threads))
  await session.run({ [session.inputNames[0]!]: tensor(0) })
  for (const callers of CALLERS) {
    const latencies: number[] = []
    const found = new Array<number>(FRAMES).fill(-1)
    const until = performance.now() + SECONDS * 1000
    let next = 0
    const started = performance.now()
    await Promise.all(Array.from({ length: callers }, async () => {
      while (performance.now() < until) {
        const i = next++ % FRAMES
        const t0 = performance.now()
        const out = await session.run({ [session.inputNames[0]!]: tensor(i) })
        latencies.push(performance.now() - t0)
        found[i] = persons(out)
      }
    }))
    const seconds = (performance.now() - started) / 1000
    concurrency.push({ threads, callers, inferencesPerSecond: latencies.length / seconds, p50Ms: p50(latencies), personsPerFrame: found })
    console.log(`threads ${threads}, callers ${callers}: ${(latencies.length / seconds).toFixed(2)} inferences/s, p50 ${p50(latencies).toFixed(0)} ms`)
  }
  await session.release()
}

// (b) the network up to its heads with a free batch dimension.
const source = modelSources.find((s) => s.name === 'centernet')!
const graph = await loadTfGraph(resolveModelJson(source, root))
for (const n of graph.nodes) if (n.op === 'Placeholder') n.attr!.shape!.shape!.dim![0]!.size = '-1'
// The heads as the graph's outputs: its post-processing (top-k, reshapes to batch 1) is left out.
graph.json.signature = { ...graph.json.signature, outputs: { wh: { name: 'tower_0/wh:0' }, keypoints: { name: 'tower_0/keypoints:0' } } }
const { onnx } = convertTfGraph(graph, 'centernet-heads')
const batching: { batch: number; threads: number; msPerFrame: number; maxAbsDifference: number }[] = []
const batchThreads = Math.max(...THREADS)
{
  const session = await ort.InferenceSession.create(onnx, { ...options(batchThreads) })
  const alone = new Map<number, Float32Array>()
  for (const batch of BATCHES) {
    const feed = (first: number) => {
      const data = new Float32Array(batch * inputs[0]!.data.length)
      for (let b = 0; b < batch; b++) data.set(inputs[(first + b) % FRAMES]!.data, b * inputs[0]!.data.length)
      return new ort.Tensor('float32', data, [batch, ...inputs[0]!.dims.slice(1)])
    }
    await session.run({ [session.inputNames[0]!]: feed(0) })
    let frames = 0, maxDiff = 0
    const started = performance.now()
    for (let first = 0; performance.now() - started < SECONDS * 1000; first += batch) {
      const out = await session.run({ [session.inputNames[0]!]: feed(first) })
      const wh = out[session.outputNames.find((o) => o.startsWith('tower_0/wh'))!]!.data as Float32Array
      const per = wh.length / batch
      for (let b = 0; b < batch; b++) {
        const i = (first + b) % FRAMES
        const own = wh.subarray(b * per, (b + 1) * per)
        if (batch === 1) alone.set(i, Float32Array.from(own))
        else if (alone.has(i)) for (let k = 0; k < per; k++) maxDiff = Math.max(maxDiff, Math.abs(own[k]! - alone.get(i)![k]!))
      }
      frames += batch
    }
    const ms = (performance.now() - started) / frames
    batching.push({ batch, threads: batchThreads, msPerFrame: ms, maxAbsDifference: maxDiff })
    console.log(`batch ${batch}: ${ms.toFixed(1)} ms per frame, heads differ by at most ${maxDiff.toExponential(2)}`)
  }
  await session.release()
}

const at = (threads: number, callers: number) => concurrency.find((c) => c.threads === threads && c.callers === callers)!
const reference = at(2, 1)
const differing = concurrency.filter((c) => c.personsPerFrame.some((n, i) => n !== reference.personsPerFrame[i])).length
const best = [...concurrency].sort((a, b) => b.inferencesPerSecond - a.inferencesPerSecond)[0]!
const batch1 = batching.find((b) => b.batch === 1)!
const bestBatch = [...batching].sort((a, b) => a.msPerFrame - b.msPerFrame)[0]!
const file = await writeReport({
  benchmark: 'detector-concurrency',
  description: 'Person detector (CenterNet 512, fp32) in process: inferences/s under 1–12 concurrent callers × 1–2 intra-op threads, and ms per frame at batch 1/2/4',
  settings: { secondsPerSetting: SECONDS, frames: FRAMES, frameSize: `${W}x${H}`, callers: CALLERS, threads: THREADS, batches: BATCHES, loadAverageAtStart: os.loadavg() },
  figures: [
    figure({ name: 'detector throughput, one caller at a time, 2 intra-op threads', unit: 'inferences/s', value: reference.inferencesPerSecond,
      baseline: { name: 'twelve concurrent callers, 2 intra-op threads (one per stream task, the previous configuration)', value: at(2, 12).inferencesPerSecond }, target: { ratioAtLeast: 1 } }),
    figure({ name: 'settings of callers × threads whose persons per frame differ from one caller alone', unit: 'settings', value: differing,
      baseline: { name: 'settings measured', value: concurrency.length }, target: { valueAtMost: 0 } }),
    figure({ name: `detector network ms per frame at batch ${bestBatch.batch} (the fastest batch)`, unit: 'ms', value: bestBatch.msPerFrame,
      baseline: { name: 'batch 1, same model and threads', value: batch1.msPerFrame }, target: { ratioAtMost: 1 } }),
  ],
  details: { concurrency, batching, best: { threads: best.threads, callers: best.callers }, loadAverageAtEnd: os.loadavg() },
})
console.log(`wrote ${file}`)
