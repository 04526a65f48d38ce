/**
 * The standing reliability suite (`npm run reliability`): property-based fuzzing of every
 * mounted route, fault injection with recovery checks, and a soak with resource sampling.
 * The `upgrade` part proves the upgrade rollback and power cuts during the install (upgrade.ts);
 * the `clock` part steps the running device's wall clock under libfaketime (clock.ts).
 * Prints its figures, writes them to bench/out/reliability.json and exits 1 on any loss or
 * invariant violation. Not part of `npm test` (vitest includes test/**\/*.test.ts only).
 *
 *   npm run reliability                       fuzz + faults + upgrade + clock + 5-minute soak (< 15 min)
 *   npm run reliability -- --soak 30m         the full soak
 *   npm run reliability -- --parts fuzz,faults --runs 100 --seed 42
 *   npm run reliability -- --parts fuzz --runs 300 --routes PTaskCancle   (only routes whose path has a name)
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { ROOT, parseDuration } from './lib.ts'
// Each part is loaded only when it runs: one part's helpers cannot keep another from running.

const { values } = parseArgs({
  options: {
    parts: { type: 'string', default: 'fuzz,faults,upgrade,clock,soak' },
    runs: { type: 'string', default: '100' },
    seed: { type: 'string' },
    routes: { type: 'string' },
    soak: { type: 'string', default: '5m' },
    'fault-rounds': { type: 'string', default: '2' },
    out: { type: 'string', default: path.join(ROOT, 'bench/out/reliability.json') },
    'no-build': { type: 'boolean', default: false },
  },
})
const parts = new Set(values.parts.split(','))
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed)
const log = (line: string) => process.stdout.write(`[reliability ${new Date().toISOString().slice(11, 19)}] ${line}\n`)

if (!values['no-build']) execFileSync(process.execPath, [path.join(ROOT, 'build.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] })

const report: Record<string, unknown> = { startedAt: new Date().toISOString(), seed, parts: [...parts] }
const failures: string[] = []
const write = () => {
  mkdirSync(path.dirname(values.out), { recursive: true })
  writeFileSync(values.out, JSON.stringify({ ...report, failures, finishedAt: new Date().toISOString() }, null, 2) + '\n')
}

try {
  if (parts.has('fuzz')) {
    const { runFuzz } = await import('./fuzz.ts')
    const fuzz = await runFuzz({ runsPerRoute: Number(values.runs), seed, log, routes: values.routes })
    report.fuzz = fuzz
    log(`fuzz: ${fuzz.routes} routes, ${fuzz.requests} requests (${fuzz.refused} refused, ${fuzz.accepted} accepted), ${fuzz.violations.length} violations, ${Math.round(fuzz.durationMs / 1000)} s`)
    for (const v of fuzz.violations) failures.push(`fuzz ${v.route} [${v.kind}] ${v.problem} <- ${v.request}`)
    write()
  }
  if (parts.has('faults')) {
    const { runFaults } = await import('./faults.ts')
    const faults = await runFaults({ rounds: Number(values['fault-rounds']), seed, log })
    report.faults = faults
    log(`faults: ${faults.injected} injected, ${faults.recoveries} recoveries, ${faults.lost.length} lost, ${faults.leaks.length} leaks, ${faults.violations.length} violations, ${Math.round(faults.durationMs / 1000)} s`)
    for (const item of faults.lost) failures.push(`faults lost: ${item}`)
    for (const item of faults.leaks) failures.push(`faults leak: ${item}`)
    for (const item of faults.violations) failures.push(`faults violation: ${item}`)
    write()
  }
  if (parts.has('upgrade')) {
    const { runUpgradeFaults } = await import('./upgrade.ts')
    const upgrade = await runUpgradeFaults({ log })
    report.upgrade = upgrade
    log(`upgrade: ${upgrade.cases.length} cases, ${upgrade.lost.length} lost, ${upgrade.violations.length} violations, ${Math.round(upgrade.durationMs / 1000)} s`)
    for (const item of upgrade.lost) failures.push(`upgrade lost: ${item}`)
    for (const item of upgrade.violations) failures.push(`upgrade violation: ${item}`)
    write()
  }
  if (parts.has('clock')) {
    const { runClockSteps } = await import('./clock.ts')
    const clock = await runClockSteps({ log })
    report.clock = clock
    log(`clock: ${clock.cases.length} steps, ${clock.violations.length} violations${clock.skipped.length ? `, skipped: ${clock.skipped.join('; ')}` : ''}, ${Math.round(clock.durationMs / 1000)} s`)
    for (const item of clock.violations) failures.push(`clock violation: ${item}`)
    write()
  }
  if (parts.has('soak')) {
    const { runSoak } = await import('./soak.ts')
    const soak = await runSoak({ durationMs: parseDuration(values.soak), log })
    report.soak = soak
    log(`soak: ${soak.requests} requests, ${soak.errors.length} errors; growth over the last two thirds: ${JSON.stringify(soak.growth)}`)
    failures.push(...soak.errors.map((e) => `soak: ${e}`), ...soak.overBound.map((e) => `soak bound: ${e}`))
  }
} catch (error) {
  failures.push(`suite aborted: ${(error as Error).stack ?? error}`)
}
write()
log(`figures written to ${path.relative(process.cwd(), values.out)}`)
if (failures.length) {
  log(`${failures.length} failures:`)
  for (const failure of failures.slice(0, 50)) log(`  ${failure}`)
  process.exit(1)
}
log('no loss, no invariant violated')
