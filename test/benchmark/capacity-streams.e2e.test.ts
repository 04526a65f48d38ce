import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCaseFileValidator } from '../../bench/case/validator.ts'
import { helmetClassifier } from '../helpers/tiny-models.ts'

// `npm run bench:capacity` as a person runs it: real stream tasks on the built device (the
// test run's global setup builds it) over HTTP, fed by GStreamer's RTSP server on loopback
// playing the office footage, one tiny step (1 channel, 4 s hold).
const run = promisify(execFile)
const repo = path.resolve(import.meta.dirname, '../..')
const validate = createCaseFileValidator()
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

const tiny = (workload: string, out: string, ...more: string[]) =>
  capacity('--workload', workload, '--target-fps', '5', '--max-channels', '1', '--hold-seconds', '4', '--warmup-seconds', '1', '--out', out, ...more)

async function written(out: string, caseId: string) {
  const caseFile = JSON.parse(await readFile(path.join(out, `${caseId}.case.json`), 'utf8'))
  const summaryBytes = await readFile(path.join(out, `${caseId}.summary.json`))
  return { caseFile, summaryBytes, summary: JSON.parse(summaryBytes.toString()) }
}

beforeAll(async () => { dir = await mkdtemp(path.join(tmpdir(), 'capacity-streams-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

describe('npm run bench:capacity on real stream tasks', () => {
  it('runs one step of person-detector channels and writes a case file that validates, whose figures come from the run', { timeout: 240_000 }, async () => {
    const out = path.join(dir, 'person')
    const r = await tiny('person-detector', out)
    expect(r.stderr).not.toContain('violation')
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect((await readdir(out)).sort()).toEqual(['capacity-cases.schema.json', 'person-detector-5fps.case.json', 'person-detector-5fps.summary.json'])
    const { caseFile, summaryBytes, summary } = await written(out, 'person-detector-5fps')
    expect(validate(caseFile)).toEqual([])
    expect(caseFile.cases[0].sourceSummarySha256).toBe(createHash('sha256').update(summaryBytes).digest('hex'))
    const cli = await run('npm', ['run', '--silent', 'case:validate', '--', path.join(out, 'person-detector-5fps.case.json')], { cwd: repo })
    expect(cli.stdout).toContain('OK')

    // The step's figures are the device's counters over the measured hold.
    const [step] = caseFile.cases[0].steps
    const { evidence } = summary.steps[0]
    const [channel] = evidence.channels
    expect(step.holdSeconds).toBe(evidence.window.seconds)
    expect(evidence.window.seconds).toBeGreaterThanOrEqual(4)
    expect(channel).toMatchObject({ task: 'person-detector', taskId: 'person-detector-1ch-1', mount: { path: '/ch1', offsetSeconds: 0 } })
    expect(channel.figures.processed).toBeGreaterThan(0)
    // At most the frames delivered in the hold and those queued (2) or in flight (1) as it began.
    expect(channel.figures.processed, JSON.stringify(channel)).toBeLessThanOrEqual(channel.figures.framesIn + 3)
    expect(step.tasks[0].minimumProcessingFps).toBe(channel.figures.processed / evidence.window.seconds)
    expect(step.tasks[0].maximumCriticalPathLatencyMs).toBe(channel.after.criticalPathLatencyP99Ms)
    expect(step.tasks[0].maximumDetectorLatencyMs).toBe(channel.after.detectorLatencyP99Ms)
    expect(channel.after.criticalPathLatencyP99Ms).toBeGreaterThan(0)
    // CPU and memory of the device's own processes: the server, its sidecar and 2 ffmpeg readers (the camera's and the task's).
    expect(evidence.resources.roles.sidecar.cpuCores).toBeGreaterThan(0)
    expect(evidence.resources.roles.ffmpeg.processesPeak).toBe(2)
    expect(step.cpuPeakPercent).toBeGreaterThan(0)
    expect(step.memoryPeakPercent).toBeGreaterThan(0)
    expect(step.memoryPeakPercent).toBe(evidence.resources.peaks.memoryPeakPercent)
    expect(step.acceleratorPeakPercent).toBeNull()
    expect(summary.settings).toMatchObject({ video: 'one-by-one-person-detection.mp4', motionGating: true, holdSeconds: 4 })
  })

  it('reports no-safety-helmet-analysis setup-blocked while no helmet classifier is installed (schemaVersion 4)', { timeout: 240_000 }, async () => {
    const out = path.join(dir, 'helmet-missing')
    const r = await tiny('no-safety-helmet-analysis', out)
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toContain('binding-blocked')
    const { caseFile } = await written(out, 'no-safety-helmet-analysis-5fps')
    expect(validate(caseFile)).toEqual([])
    expect(caseFile.schemaVersion).toBe(4)
    expect(caseFile.cases[0]).toMatchObject({
      outcome: 'setup-blocked', boundaryKind: 'binding-blocked', lastPassingChannels: null, firstBlockedChannels: 1,
      steps: [{ channels: 1, result: 'STOP', cpuPeakPercent: null }],
    })
    expect(caseFile.cases[0].blockedReason).toMatch(/^no-safety-helmet-analysis \(algorithm no-safety-helmet-analysis\) on channel 1 of 1: api\.error\.TaskCreateFailed — .*helmet-classifier/)
  })

  it('runs no-safety-helmet-analysis once an operator classifier is installed', { timeout: 240_000 }, async () => {
    const out = path.join(dir, 'helmet')
    const model = path.join(dir, 'helmet.onnx')
    await writeFile(model, helmetClassifier())
    const r = await tiny('no-safety-helmet-analysis', out, '--helmet-classifier', model)
    expect(r.code, r.stdout + r.stderr).toBe(0)
    const { caseFile, summary } = await written(out, 'no-safety-helmet-analysis-5fps')
    expect(validate(caseFile)).toEqual([])
    expect(caseFile.cases[0].outcome).not.toBe('setup-blocked')
    expect(caseFile.cases[0].steps[0].tasks[0]).toMatchObject({ name: 'no-safety-helmet-analysis', targetFps: 5 })
    expect(summary.steps[0].evidence.channels[0].figures.processed).toBeGreaterThan(0)
    expect(summary.settings.helmetClassifier).toBe('helmet.onnx')
  })

  it('exits 2 with the usage for bad flags', async () => {
    const r = await capacity('--workload', 'person-detector')
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--target-fps is required')
    expect(r.stderr).toContain('usage: npm run bench:capacity')
  })
})
