/**
 * `npm run bench:capacity -- --workload W --target-fps N [...]` (flags: args.ts): runs the
 * capacity benchmark against the device's inference sidecar through its frame path (build
 * first: `node build.mjs`), then
 * writes `<out>/<caseId>.summary.json`, `<out>/<caseId>.case.json` and the cases schema
 * beside them. Exit codes: 0 the case file validates, 1 no valid case file, 2 bad flags.
 */
import path from 'node:path'
import { loadConfig } from '../../shared/config.ts'
import { formatViolation } from '../case/validator.ts'
import { parseCapacityArgs, USAGE, type CapacityArgs } from './args.ts'
import { DEFAULT_RUN } from './defaults.ts'
import { runCapacity } from './run.ts'
import { createSidecarTarget } from './sidecar-target.ts'

const projectRoot = path.resolve(import.meta.dirname, '../..')

async function main(argv: string[]): Promise<number> {
  let args: CapacityArgs
  try {
    args = parseCapacityArgs(argv)
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`)
    return 2
  }
  // The sidecar bundle comes from `node build.mjs` (dist/runtime/sidecar.mjs).
  const target = await createSidecarTarget({
    projectRoot, config: loadConfig(), algorithms: args.algorithms, frameDir: args.frameDir, frameDeadlineMs: DEFAULT_RUN.frameDeadlineMs,
  })
  try {
    const result = await runCapacity(target, {
      ...args,
      outDir: path.resolve(args.outDir),
      drainTimeoutMs: DEFAULT_RUN.drainTimeoutMs,
      startedAt: new Date(),
    }, (line) => console.log(line))
    console.log(`summary: ${result.summaryFile}`)
    if (result.caseFile) console.log(`case file: ${result.caseFile}`)
    for (const v of result.violations) console.error(`  ${formatViolation(v)}`)
    if (result.error) {
      console.error(result.error)
      return 1
    }
    const c = result.caseFileJson!.cases[0]!
    console.log(`OK ${c.caseId}: ${c.outcome} (${c.boundaryKind}), last passing ${c.lastPassingChannels} channel(s), first blocked ${c.firstBlockedChannels ?? '–'}`)
    return 0
  } finally {
    await target.close()
  }
}

process.exitCode = await main(process.argv.slice(2))
