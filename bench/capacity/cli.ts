/**
 * `npm run bench:capacity -- --workload W --target-fps N [...]` (flags: args.ts): runs the
 * capacity benchmark on real stream tasks of the built device (`node build.mjs` first) fed
 * by an RTSP server on loopback (stream-target.ts), then writes `<out>/<caseId>.summary.json`,
 * `<out>/<caseId>.case.json` and the cases schema beside them.
 * Exit codes: 0 the case file validates, 1 it does not (or the run failed), 2 bad flags.
 */
import { formatViolation } from '../case/validator.ts'
import { parseCapacityArgs, USAGE, type CapacityArgs } from './args.ts'
import { runOnStreams } from './run-streams.ts'

async function main(argv: string[]): Promise<number> {
  let args: CapacityArgs
  try {
    args = parseCapacityArgs(argv)
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`)
    return 2
  }
  const result = await runOnStreams(args, (line) => console.log(line))
  console.log(`summary: ${result.summaryFile}`)
  console.log(`case file: ${result.caseFile}`)
  if (result.violations.length > 0) {
    console.error(`the case file does not validate: ${result.violations.length} violation(s)`)
    for (const v of result.violations) console.error(`  ${formatViolation(v)}`)
    return 1
  }
  const c = result.caseFileJson.cases[0]!
  console.log(`OK ${c.caseId}: ${c.outcome} (${c.boundaryKind}), last passing ${c.lastPassingChannels ?? '–'} channel(s), first blocked ${c.firstBlockedChannels ?? '–'}${c.blockedReason ? ` — ${c.blockedReason}` : ''}`)
  return 0
}

process.exitCode = await main(process.argv.slice(2))
