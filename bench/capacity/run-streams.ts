import path from 'node:path'
import type { CapacityArgs } from './args.ts'
import { caseIdFor } from './build-case.ts'
import { runCapacity, type CapacityResult } from './run.ts'
import { openStreamTarget } from './stream-target.ts'

/** One capacity run on real streams (stream-target.ts) with the flags of `npm run bench:capacity`. */
export async function runOnStreams(args: CapacityArgs, log: (line: string) => void = () => {}): Promise<CapacityResult> {
  const startedAt = new Date()
  const target = await openStreamTarget({
    video: args.video, maxChannels: args.maxChannels, motionGating: args.motionGating, detectorInputSize: args.detectorInputSize, warmupSeconds: args.warmupSeconds,
    algorithms: args.algorithms, helmetClassifier: args.helmetClassifier,
  })
  try {
    return await runCapacity(target, {
      caseId: caseIdFor(args.workload, args.targetFps, args.motionGating, args.detectorInputSize),
      workload: args.workload, targetFps: args.targetFps, minChannels: args.minChannels, maxChannels: args.maxChannels,
      holdSeconds: args.holdSeconds, stepMode: args.stepMode, gates: args.gates, scope: args.scope,
      outDir: path.resolve(args.outDir), settings: target.settings, startedAt,
    }, log)
  } finally {
    await target.close()
  }
}
