import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHANGED_PASSWORD, startDevice, type DeviceProcess } from '../helpers/device.ts'
import { startProxy } from '../helpers/proxy.ts'

const DEMO = path.resolve('node_modules/@vladmandic/face-api/demo')
// sample1.jpg: 3 people facing the camera; sample6.jpg is over the image limit used below.
const SAMPLE = path.join(DEMO, 'sample1.jpg')
const SAMPLE_FACES = 3
const LARGE = path.join(DEMO, 'sample6.jpg')
const IMAGE_LIMIT = 250_000
const CHUNK = 16 * 1024
const BIN = path.resolve('runtime/device-cli.mjs')

function cli(args: string[], stateDir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args, '--password', CHANGED_PASSWORD, '--state-dir', stateDir])
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const resumeFiles = (stateDir: string) => {
  const dir = path.join(stateDir, 'uploads')
  return existsSync(dir) ? readdirSync(dir) : []
}

const env = { MAX_ENCODED_IMAGE_BYTES: String(IMAGE_LIMIT) }
let first: DeviceProcess
let second: DeviceProcess | null = null
const stateDir = mkdtempSync(path.join(tmpdir(), 'cli-detect-'))

beforeAll(async () => {
  first = await startDevice({ env })
  await first.adminToken()
})
afterAll(async () => {
  await first?.stop()
  await second?.stop()
  first?.cleanup()
  rmSync(stateDir, { recursive: true, force: true })
})

describe('device-cli detect: the typical flow of spec 1 against the real runtime', () => {
  it('lists the image-analysis algorithms', async () => {
    const result = await cli(['algorithms', '--url', first.url, '--json'], stateDir)
    expect(result.code).toBe(0)
    const rows = JSON.parse(result.stdout) as { algorithmId: string; algorithmUsage: string }[]
    expect(rows.map((r) => r.algorithmId)).toContain('face-detection')
    expect(rows.every((r) => r.algorithmUsage === '2')).toBe(true)
  })

  it('detects the faces of a photo and prints a table of targets', async () => {
    const result = await cli(['detect', SAMPLE, '--algorithm', 'face-detection', '--url', first.url], stateDir)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`algorithm face-detection · ${SAMPLE_FACES} target(s) in 1 area(s)`)
    expect(result.stdout.split('\n').filter((line) => /^\d+\s+face\s+0\.\d{3}/.test(line))).toHaveLength(SAMPLE_FACES)
    expect(resumeFiles(stateDir)).toEqual([])
  })

  it('resumes the upload after the runtime is restarted mid-upload, then detects', async () => {
    const proxy = await startProxy(first.url)
    try {
      // Chunks 0-2 pass; chunk 3 is held while the device is killed and started again on the same data.
      proxy.rule = (r) => (r.path.endsWith('/uploadTemp') && r.n === 4 ? 'hold' : 'pass')
      const interrupted = cli(['detect', SAMPLE, '--algorithm', 'face-detection', '--url', proxy.url, '--chunk-size', String(CHUNK), '--retries', '0', '--json'], stateDir)
      await proxy.held()
      await first.kill()
      second = await startDevice({ dataDir: first.dataDir, env })
      proxy.target = second.url
      proxy.releaseHeld()
      const broken = await interrupted
      expect(broken.code).toBe(4)
      expect(resumeFiles(stateDir)).toHaveLength(1)

      proxy.rule = () => 'pass'
      const resumed = await cli(['detect', SAMPLE, '--algorithm', 'face-detection', '--url', proxy.url, '--chunk-size', String(CHUNK), '--json'], stateDir)
      expect(resumed.stderr).toBe('')
      expect(resumed.code).toBe(0)
      const outcome = JSON.parse(resumed.stdout)
      expect(outcome.upload).toEqual(expect.objectContaining({ resumed: true, resumedFromChunk: 3, totalChunks: Math.ceil(readFileSync(SAMPLE).length / CHUNK) }))
      const targets = outcome.result.areaList.flatMap((a: { targetList: unknown[] }) => a.targetList)
      expect(targets).toHaveLength(SAMPLE_FACES)
      expect(resumeFiles(stateDir)).toEqual([])
    } finally {
      await proxy.close()
    }
  })

  it('an image over the limit is a device error (exit 3) showing actual size, limit and action', async () => {
    const device = second ?? first
    const result = await cli(['detect', LARGE, '--algorithm', 'face-detection', '--url', device.url], stateDir)
    expect(result.code).toBe(3)
    expect(result.stderr).toContain('api.error.imageInputTooLarge')
    expect(result.stderr).toContain(`actual: ${readFileSync(LARGE).length}`)
    expect(result.stderr).toContain(`limit: ${IMAGE_LIMIT}`)
    expect(result.stderr).toContain('action: RESIZE_OR_RECOMPRESS_IMAGE')
    // A refused first chunk opened no session: nothing is left to resume.
    expect(resumeFiles(stateDir)).toEqual([])
  })

  it('an unknown algorithm is the device error of spec 7.1 (exit 3)', async () => {
    const device = second ?? first
    const result = await cli(['detect', SAMPLE, '--algorithm', 'no-such-algorithm', '--url', device.url, '--json'], stateDir)
    expect(result.code).toBe(3)
    expect(JSON.parse(result.stderr).error).toEqual(expect.objectContaining({ messageKey: 'api.error.ActionAlgLoadFailed', recommendedAction: 'QUERY_ALGORITHMS' }))
  })
})
