import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCaseFileValidator } from '../../bench/case/validator.ts'

// `npm run bench:capacity` as a person runs it, against the real inference sidecar (built by
// the test run's global setup) through its frame path, on the sample photos. The
// face-detection pipeline stands in for the person detector (`--algorithm`) until a
// person-detection manifest ships in models/manifests.
const run = promisify(execFile)
const repo = path.resolve(import.meta.dirname, '../..')
let dir: string

async function capacity(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'bench:capacity', '--', ...args], { cwd: repo, timeout: 240_000 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

beforeAll(async () => { dir = await mkdtemp(path.join(tmpdir(), 'capacity-cli-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

describe('npm run bench:capacity on the real sidecar', () => {
  it('runs two short steps and writes a summary and a case file that validates and hashes it', async () => {
    const out = path.join(dir, 'ok')
    const r = await capacity('--workload', 'person-detector', '--target-fps', '1', '--max-channels', '2', '--hold-seconds', '2',
      '--algorithm', 'person-detector=face-detection', '--out', out, '--max-critical-path-latency-ms', '30000', '--max-detector-latency-ms', '30000')
    expect(r.stderr).not.toContain('violation')
    expect(r.code).toBe(0)
    expect((await readdir(out)).sort()).toEqual(['capacity-cases.schema.json', 'person-detector-1fps.case.json', 'person-detector-1fps.summary.json'])
    const caseFile = JSON.parse(await readFile(path.join(out, 'person-detector-1fps.case.json'), 'utf8'))
    expect(createCaseFileValidator()(caseFile)).toEqual([])
    const summary = await readFile(path.join(out, 'person-detector-1fps.summary.json'))
    expect(caseFile.cases[0].sourceSummarySha256).toBe(createHash('sha256').update(summary).digest('hex'))
    expect(caseFile.evidenceDate).toBe(new Date().toISOString().slice(0, 10))
    expect(caseFile.cases[0].steps.map((s: { channels: number }) => s.channels)).toEqual([1, 2])
    // Every frame offered went through the sidecar: at 1 fps for 2 s, 2 frames per channel.
    const frames = JSON.parse(summary.toString()).steps.flatMap((s: { frames: unknown[] }) => s.frames)
    expect(frames).toHaveLength(2 + 4)
    const cli = await run('npm', ['run', '--silent', 'case:validate', '--', path.join(out, 'person-detector-1fps.case.json')], { cwd: repo })
    expect(cli.stdout).toContain('OK')
  })

  it('reports a task whose algorithm the device lacks as binding-blocked and writes no case file', async () => {
    const out = path.join(dir, 'blocked')
    const r = await capacity('--workload', 'person-detector', '--target-fps', '1', '--max-channels', '1', '--hold-seconds', '1',
      '--algorithm', 'person-detector=no-such-algorithm', '--out', out)
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('binding-blocked')
    expect(r.stderr).toContain('no step passed')
    expect(await readdir(out)).toEqual(['person-detector-1fps.summary.json'])
  })

  it('exits 2 with the usage for bad flags', async () => {
    const r = await capacity('--workload', 'person-detector')
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--target-fps is required')
    expect(r.stderr).toContain('usage: npm run bench:capacity')
  })
})
