/**
 * Capacity on real streams (spec 2.8), as part of `npm run bench`: person-detector stream
 * tasks at 5 fps per channel on the office footage (one RTSP camera per channel, capacity
 * runner: bench/capacity/), stepped +1 channel until a step misses the gates (fps ratio
 * ≥ 0.95, missing ≤ 0.01, average discard ≤ 0.05, critical-path p99 ≤ 1000 ms; the detector
 * gate is set to the critical-path one, which bounds it).
 *
 *   baseline: the same run with motion gating off (every frame to the detector);
 *   figure:   the run with motion gating on (the device's default). Target: ≥ 3× the channels,
 *             and no person visit the ungated run found missed (same channels, same footage).
 * Also: decode CPU per channel (ffmpeg) against inference CPU per channel, and the device's
 * RSS per added channel. Both runs' case files and summaries go to bench/out/capacity/.
 *
 * Settings (environment): BENCH_CAPACITY_HOLD_SECONDS (170: the whole footage once, plus its
 * longest visit), BENCH_CAPACITY_MIN_CHANNELS (1), BENCH_CAPACITY_MAX_CHANNELS (16),
 * BENCH_CAPACITY_STEP (increment), BENCH_CAPACITY_WARMUP_SECONDS (5), BENCH_CAPACITY_OUT.
 */
import os from 'node:os'
import path from 'node:path'
import { parseCapacityArgs } from './capacity/args.ts'
import { DEFAULT_GATES } from './capacity/defaults.ts'
import type { CapacityResult, StepEvidence } from './capacity/run.ts'
import { runOnStreams } from './capacity/run-streams.ts'
import type { StreamStepEvidence } from './capacity/stream-target.ts'
import { compareVisits } from './capacity/visits.ts'
import { formatViolation } from './case/validator.ts'
import { BENCH_OUT_DIR, figure, writeReport } from './lib/report.ts'

const env = (name: string, fallback: string) => process.env[`BENCH_CAPACITY_${name}`] ?? fallback
const settings = {
  workload: 'person-detector', targetFps: 5,
  holdSeconds: Number(env('HOLD_SECONDS', '170')), warmupSeconds: Number(env('WARMUP_SECONDS', '5')),
  minChannels: Number(env('MIN_CHANNELS', '1')), maxChannels: Number(env('MAX_CHANNELS', '16')), step: env('STEP', 'increment'),
  out: path.resolve(env('OUT', path.join(BENCH_OUT_DIR, 'capacity'))),
  gates: { ...DEFAULT_GATES, maxDetectorLatencyMs: DEFAULT_GATES.maxCriticalPathLatencyMs },
  loadAverageAtStart: os.loadavg(),
}
const flags = (gating: 'on' | 'off') => parseCapacityArgs([
  '--workload', settings.workload, '--target-fps', String(settings.targetFps), '--motion-gating', gating, '--step', settings.step,
  '--min-channels', String(settings.minChannels), '--max-channels', String(settings.maxChannels),
  '--hold-seconds', String(settings.holdSeconds), '--warmup-seconds', String(settings.warmupSeconds), '--out', settings.out,
  '--max-detector-latency-ms', String(settings.gates.maxDetectorLatencyMs),
])

async function run(gating: 'on' | 'off'): Promise<CapacityResult> {
  console.log(`\nmotion gating ${gating}:`)
  const result = await runOnStreams(flags(gating), (line) => console.log(`  ${line}`))
  for (const v of result.violations) console.error(formatViolation(v))
  if (result.violations.length > 0) throw new Error(`${result.caseFile} does not validate`)
  return result
}

const ungated = await run('off')
const gated = await run('on')

const measured = (r: CapacityResult) => r.evidence.filter((e): e is StepEvidence & { evidence: StreamStepEvidence } => e.evidence !== null)
const passing = (r: CapacityResult) => r.caseFileJson.cases[0]!.lastPassingChannels ?? 0

// Visits: at every channel count both runs measured, channel by channel.
const visitSteps = measured(ungated).flatMap((u) => {
  const g = measured(gated).find((e) => e.channels === u.channels)
  if (!g) return []
  const channels = (e: StreamStepEvidence) => e.channels.map((c) => ({ channel: c.channel, visits: c.visits }))
  return [{
    channels: u.channels,
    ...compareVisits(channels(u.evidence), channels(g.evidence)),
    objectEntered: u.evidence.channels.map((c, i) => ({ channel: c.channel, ungated: c.objectEntered, gated: g.evidence.channels[i]?.objectEntered ?? null })),
  }]
})
const missed = visitSteps.reduce((n, s) => n + s.missed.length, 0)
const compared = visitSteps.reduce((n, s) => n + s.compared, 0)

// Per-channel costs of the gated run: at its largest step; RSS as the growth from its first step (the model is loaded by then).
const first = measured(gated)[0]!
const cost = measured(gated).at(-1)!
const perChannel = (cores: number) => (cores / cost.channels) * 100
const rssPerChannel = cost.channels > first.channels
  ? (cost.evidence.resources.rssPeakMb - first.evidence.resources.rssPeakMb) / (cost.channels - first.channels)
  : cost.evidence.rssPerChannelMb

const outcome = (r: CapacityResult) => {
  const { outcome, boundaryKind, lastPassingChannels, firstBlockedChannels } = r.caseFileJson.cases[0]!
  return { outcome, boundaryKind, lastPassingChannels, firstBlockedChannels }
}
const steps = (r: CapacityResult) => r.steps.map((s, i) => {
  const e = r.evidence[i]!.evidence as StreamStepEvidence | null
  return {
    channels: s.channels, result: s.result, minimumFpsRatio: s.tasks[0]!.minimumFpsRatio, missingRate: s.tasks[0]!.missingRate,
    averageDiscardRate: s.averageDiscardRate, criticalPathP99Ms: s.maximumCriticalPathLatencyMs, detectorP99Ms: s.maximumDetectorLatencyMs,
    deviceCpuPeakPercent: s.cpuPeakPercent, machineCpuPeakPercent: e?.resources.machineCpuPeakPercent ?? null,
    cores: e && { server: e.resources.roles.server.cpuCores, sidecar: e.resources.roles.sidecar.cpuCores, ffmpeg: e.resources.roles.ffmpeg.cpuCores },
    rssPeakMb: e?.resources.rssPeakMb ?? null, loadAverage: e?.resources.loadAverage ?? null,
    motionSkippedShare: e && e.channels.reduce((n, c) => n + c.figures.motionSkipped, 0) / Math.max(1, e.channels.reduce((n, c) => n + c.figures.processed, 0)),
    failureReason: s.failureReason,
  }
})

const file = await writeReport({
  benchmark: 'capacity',
  description: 'Person-detector channels at 5 fps on real RTSP streams (office footage) meeting the spec 2.8 gates, motion gating on vs off',
  settings: { ...settings, footage: 'one-by-one-person-detection.mp4 (../shared/media), one RTSP camera per channel', loadAverageAtEnd: os.loadavg() },
  figures: [
    figure({ name: 'person-detector channels meeting the gates, motion gating on', unit: 'channels', value: passing(gated),
      baseline: { name: 'the same run, every frame to the detector (motion gating off)', value: passing(ungated) }, target: { ratioAtLeast: 3 } }),
    figure({ name: 'person visits the ungated run found that the gated run missed', unit: 'visits', value: missed,
      baseline: { name: 'visits found by the ungated run and compared (same channels, both runs)', value: compared }, target: { valueAtMost: 0 } }),
    figure({ name: `decode CPU per channel at ${cost.channels} channel(s) (ffmpeg: the task's reader and the camera's own)`, unit: '% of one core',
      value: perChannel(cost.evidence.resources.roles.ffmpeg.cpuCores),
      baseline: { name: 'inference CPU per channel (sidecar), same step', value: perChannel(cost.evidence.resources.roles.sidecar.cpuCores) }, target: { ratioAtMost: 0.5 } }),
    figure({ name: `device RSS per added channel, ${first.channels} to ${cost.channels} channel(s) (server + sidecar + ffmpeg; above idle when one step)`, unit: 'MB', value: rssPerChannel,
      baseline: { name: `device RSS at ${first.channels} channel(s)`, value: first.evidence.resources.rssPeakMb }, target: { ratioAtMost: 0.25 } }),
  ],
  details: {
    caseFiles: [gated.caseFile, ungated.caseFile], summaryFiles: [gated.summaryFile, ungated.summaryFile],
    gated: { ...outcome(gated), steps: steps(gated) },
    ungated: { ...outcome(ungated), steps: steps(ungated) },
    visits: visitSteps,
  },
})
console.log(`wrote ${file}`)
