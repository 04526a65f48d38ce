/**
 * Capacity at a modest step count (spec 2.8), as part of `npm run bench`.
 *
 *   baseline: the raw pipeline in process (InferenceEngine, no socket), frames one after
 *             another on the same camera-sized RGB frames → frames per second it sustains;
 *   figure:   the capacity runner through the sidecar's frame path: person-detector
 *             channels at a third of that rate each, stepped 1, 2, 4 (5 s holds) → the
 *             frames per second processed over all channels at the highest step run.
 * Target: the frame path (socket, per-channel queues, shared sessions) delivers at least
 * 80 % of the raw pipeline's rate once the channels saturate it. The case file and summary
 * go to bench/out/capacity/ and must validate (a run in which not even one channel passed —
 * a very busy machine — writes no case file; the figure is still reported).
 *
 * Settings: BENCH_CAPACITY_HOLD_SECONDS (5), BENCH_CAPACITY_MAX_CHANNELS (4).
 */
import path from 'node:path'
import { defaultManifestDir, loadManifests } from '../models/load-manifests.ts'
import { loadBundledEngine } from './lib/bundled-engine.ts'
import { loadConfig } from '../shared/config.ts'
import { formatViolation } from './case/validator.ts'
import { DEFAULT_ALGORITHM_BY_TASK } from './capacity/algorithms.ts'
import { DEFAULT_GATES, DEFAULT_RUN } from './capacity/defaults.ts'
import { DEFAULT_FRAME_DIR, DEFAULT_FRAME_PATTERN, loadFrames } from './capacity/image-frames.ts'
import { runCapacity } from './capacity/run.ts'
import { createSidecarTarget } from './capacity/sidecar-target.ts'
import { BENCH_OUT_DIR, figure, writeReport } from './lib/report.ts'

const root = path.resolve(import.meta.dirname, '..')
const config = loadConfig()
const holdSeconds = Number(process.env.BENCH_CAPACITY_HOLD_SECONDS ?? 5)
const maxChannels = Number(process.env.BENCH_CAPACITY_MAX_CHANNELS ?? 4)
const BASELINE_FRAMES = 20

// Until a person-detection manifest ships, the face pipeline stands in (recorded in settings).
const manifests = loadManifests(config.modelsManifestDir || defaultManifestDir(root), root)
const wanted = DEFAULT_ALGORITHM_BY_TASK['person-detector']
const algorithm = manifests.has(wanted) ? wanted : 'face-detection'
if (algorithm !== wanted) console.log(`no ${wanted} manifest: face-detection stands in for the person detector`)

// Baseline: the raw pipeline in process, sequential frames.
const frames = await loadFrames(path.join(root, DEFAULT_FRAME_DIR), undefined, DEFAULT_FRAME_PATTERN)
// The baseline runs the device's code as the device builds it (bench/lib/bundled-engine.ts).
const { InferenceEngine } = await loadBundledEngine()
const engine = new InferenceEngine({ projectRoot: root, intraOpThreads: config.inferenceThreads, limits: { maxEncodedImageBytes: config.maxEncodedImageBytes, maxImagePixels: config.maxImagePixels } })
let rawFps: number
try {
  await engine.load('baseline', algorithm)
  const rgb = (i: number) => { const f = frames[i % frames.length]!; return { ...f, data: Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength) } }
  for (let i = 0; i < 3; i++) await engine.detect({ handle: 'baseline', image: rgb(i), overlay: false })
  const started = performance.now()
  for (let i = 0; i < BASELINE_FRAMES; i++) await engine.detect({ handle: 'baseline', image: rgb(i), overlay: false })
  rawFps = BASELINE_FRAMES / ((performance.now() - started) / 1000)
} finally {
  await engine.close()
}
const targetFps = +(rawFps / 3).toFixed(2)
console.log(`raw pipeline: ${rawFps.toFixed(2)} frames/s → ${targetFps} fps per channel`)

// Figure: the capacity runner through the sidecar frame path.
const target = await createSidecarTarget({
  projectRoot: root, config, algorithms: { ...DEFAULT_ALGORITHM_BY_TASK, 'person-detector': algorithm }, frameDir: null, frameDeadlineMs: DEFAULT_RUN.frameDeadlineMs,
})
let result
try {
  result = await runCapacity(target, {
    workload: 'person-detector', targetFps, maxChannels, holdSeconds, stepMode: 'double', queueDepth: DEFAULT_RUN.queueDepth,
    drainTimeoutMs: DEFAULT_RUN.drainTimeoutMs, gates: DEFAULT_GATES, scope: DEFAULT_RUN.scope,
    outDir: path.join(BENCH_OUT_DIR, 'capacity'), startedAt: new Date(),
  }, (line) => console.log(line))
} finally {
  await target.close()
}
for (const v of result.violations) console.error(formatViolation(v))
if (result.violations.length > 0) throw new Error(result.error ?? 'the case file does not validate')
if (result.error) console.log(result.error)
const top = result.evidence[result.evidence.length - 1]!
const frameFps = top.frames.filter((f) => f.fate === 'processed').length / top.holdSeconds
const c = result.caseFileJson?.cases[0] ?? null

const file = await writeReport({
  benchmark: 'capacity',
  description: `Capacity runner through the sidecar frame path (${algorithm}, ${targetFps} fps per channel, steps up to ${maxChannels}) vs the raw pipeline in process`,
  settings: { algorithm, targetFps, maxChannels, holdSeconds, queueDepth: DEFAULT_RUN.queueDepth, baselineFrames: BASELINE_FRAMES, frameSize: `${frames[0]!.width}x${frames[0]!.height}`, gates: DEFAULT_GATES },
  figures: [
    figure({ name: `frame-path throughput at ${top.channels} channels`, unit: 'frames/s', value: frameFps, baseline: { name: 'raw pipeline in process, sequential', value: rawFps }, target: { ratioAtLeast: 0.8 } }),
  ],
  details: {
    caseFile: result.caseFile, summaryFile: result.summaryFile, error: result.error,
    outcome: c?.outcome ?? null, boundaryKind: c?.boundaryKind ?? null, lastPassingChannels: c?.lastPassingChannels ?? null, firstBlockedChannels: c?.firstBlockedChannels ?? null,
    steps: result.steps.map((s) => ({ channels: s.channels, result: s.result, minimumProcessingFps: s.minimumProcessingFps, averageDiscardRate: s.averageDiscardRate, maximumCriticalPathLatencyMs: s.maximumCriticalPathLatencyMs, cpuPeakPercent: s.cpuPeakPercent })),
  },
})
console.log(`wrote ${file}`)
