/**
 * `npm run bench:test-loop [-- --runs 3] [--baseline-ref REV]`: how long the test loop takes on
 * this machine, on a fresh clone as CI sees it. Clones HEAD into a temporary folder (with the
 * repository's `../shared` beside it, where the footage is), installs it with `npm ci`, then runs
 * `npm run test:unit` once and the whole `npm test` `--runs` times in a row, each timed, with the
 * files and tests vitest counted and whether it passed. With `--baseline-ref REV` the suite of
 * REV (the previous configuration, e.g. one file at a time) runs once in the same clone first,
 * as the baseline; without it the baseline is the serial figure given by `--baseline-seconds`.
 *
 * Writes `bench/out/test-loop.json` (contract in bench/lib/report.ts). Nothing else should run
 * on the machine meanwhile: the figures are wall-clock times.
 */
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { figure, writeReport } from './lib/report.ts'

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    'baseline-ref': { type: 'string' },
    'baseline-seconds': { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
})
const runs = Number(args.runs)
const root = path.resolve(import.meta.dirname, '..')

interface Run { command: string; seconds: number; exitCode: number; files: number | null; tests: number | null; failed: number | null; skipped: number | null }

/** Vitest's closing lines: ` Test Files  170 passed (170)` and `      Tests  1412 passed | 2 skipped (1414)`. */
function counts(output: string) {
  // eslint-disable-next-line no-control-regex -- vitest colours its summary
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '')
  const total = (label: string) => { const m = plain.match(new RegExp(`^\\s*${label}\\s+.*\\((\\d+)\\)\\s*$`, 'm')); return m ? Number(m[1]) : null }
  const part = (label: string, word: string) => {
    const line = plain.match(new RegExp(`^\\s*${label}\\s+(.*)$`, 'm'))?.[1] ?? ''
    const m = line.match(new RegExp(`(\\d+) ${word}`))
    return m ? Number(m[1]) : 0
  }
  return { files: total('Test Files'), tests: total('Tests'), failed: part('Tests', 'failed') + part('Test Files', 'failed'), skipped: part('Tests', 'skipped') }
}

/** Runs `npm <args>` in `cwd`, echoing its output, and times it. */
function time(cwd: string, npmArgs: string[]): Promise<Run> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const child = spawn('npm', npmArgs, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: 'true' } })
    let output = ''
    const keep = (chunk: Buffer) => { output = (output + chunk.toString()).slice(-200_000); process.stdout.write(chunk) }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    child.once('error', reject)
    child.once('close', (code) => resolve({
      command: `npm ${npmArgs.join(' ')}`, seconds: (performance.now() - started) / 1000, exitCode: code ?? 1, ...counts(output),
    }))
  })
}

const work = mkdtempSync(path.join(tmpdir(), 'test-loop-'))
const clone = path.join(work, 'main')
try {
  execFileSync('git', ['clone', '--quiet', root, clone], { stdio: 'inherit' })
  // The footage and photos the tests read live beside the checkout (../shared/media).
  symlinkSync(path.resolve(root, '..', 'shared'), path.join(work, 'shared'))
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: clone, encoding: 'utf8' }).trim()

  let baseline: Run | null = null
  if (args['baseline-ref']) {
    execFileSync('git', ['checkout', '--quiet', args['baseline-ref']], { cwd: clone, stdio: 'inherit' })
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: clone, stdio: 'inherit' })
    baseline = await time(clone, ['test'])
    execFileSync('git', ['checkout', '--quiet', head], { cwd: clone, stdio: 'inherit' })
  }
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: clone, stdio: 'inherit' })
  const unit = await time(clone, ['run', 'test:unit'])
  const full: Run[] = []
  for (let i = 0; i < runs; i++) full.push(await time(clone, ['test']))

  const baselineSeconds = baseline?.seconds ?? Number(args['baseline-seconds'] ?? NaN)
  const baselineName = baseline ? `npm test at ${args['baseline-ref']}` : 'npm test, one file at a time (given)'
  const slowest = Math.max(...full.map((r) => r.seconds))
  const figures = [
    figure({ name: 'npm test, slowest of the runs', unit: 's', value: slowest, baseline: { name: baselineName, value: baselineSeconds }, target: { valueAtMost: 600 } }),
    figure({ name: 'npm run test:unit', unit: 's', value: unit.seconds, baseline: { name: 'npm test, slowest of the runs', value: slowest }, target: { valueAtMost: 60 } }),
    figure({ name: 'runs that passed in a row', unit: 'runs', value: full.filter((r) => r.exitCode === 0).length, baseline: { name: 'runs', value: runs }, target: { ratioAtLeast: 1 } }),
  ]
  const file = await writeReport({
    benchmark: 'test-loop',
    description: 'The test loop on a fresh clone: npm test (provisioning, tsc, eslint, every vitest project) and npm run test:unit, wall-clock',
    settings: { runs, head, baselineRef: args['baseline-ref'] ?? null },
    figures,
    details: { baseline, unit, full },
  })
  console.log(`wrote ${file}`)
} finally {
  if (!args.keep) rmSync(work, { recursive: true, force: true })
}
