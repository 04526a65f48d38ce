import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { CHANGED_PASSWORD, startDevice, type DeviceProcess } from '../helpers/device.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { startProxy, type Proxy } from '../helpers/proxy.ts'

const SAMPLE = path.resolve('node_modules/@vladmandic/face-api/demo/sample1.jpg')
const SAMPLE_SIZE = readFileSync(SAMPLE).length
const CHUNK = 16 * 1024
const BIN = path.resolve('runtime/device-cli.mjs')

const cleanups: (() => Promise<void> | void)[] = []
test.afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Runs the real CLI process; resolves with exit code and output. */
function cli(args: string[], stateDir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args, '--password', CHANGED_PASSWORD, '--state-dir', stateDir, '--json'])
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const resumeFiles = (stateDir: string) => {
  const dir = path.join(stateDir, 'uploads')
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : []
}

async function ready(device: DeviceProcess) {
  await device.adminToken() // changes the initial password to CHANGED_PASSWORD
  return device
}

let device: DeviceProcess
let mtk: string
// The session changes the initial password to CHANGED_PASSWORD, which the CLI signs in with.
test.beforeAll(async ({ device: started, mtk: session }) => {
  device = started
  mtk = session
})

function newStateDir() {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'cli-state-'))
  cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }))
  return stateDir
}

const activeSessions = async () =>
  (await device.post('/gtw/cwai/atomic/model/uploadCapabilities', {}, mtk)).body.resData.activeSessions as number

test.describe('device-cli chunked upload (spec 4.5, 4.12)', () => {
  test('uploads in chunks bounded by the requested size and deletes the resume identity on completion', async () => {
    const stateDir = newStateDir()
    const proxy = await startProxy(device.url)
    cleanups.push(() => proxy.close())

    const result = await cli(['upload', SAMPLE, '--url', proxy.url, '--chunk-size', String(CHUNK)], stateDir)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const outcome = JSON.parse(result.stdout)
    const totalChunks = Math.ceil(SAMPLE_SIZE / CHUNK)
    expect(outcome).toEqual({ uploadId: expect.any(String), totalChunks, resumedFromChunk: 0, resumed: false })
    expect(proxy.seen.filter((r) => r.path.endsWith('/uploadTemp'))).toHaveLength(totalChunks)
    expect(resumeFiles(stateDir)).toEqual([])
  })

  test('resumes after the runtime is restarted mid-upload, from the chunk the device asks for', async () => {
    const first = await ready(await startDevice())
    const stateDir = newStateDir()
    let second: DeviceProcess | null = null
    cleanups.push(async () => {
      await first.stop()
      await second?.stop()
      first.cleanup()
    })
    const proxy: Proxy = await startProxy(first.url)
    cleanups.push(() => proxy.close())
    // Chunks 0, 1, 2 pass; the request of chunk 3 is held while the device is killed and restarted.
    proxy.rule = (r) => (r.path.endsWith('/uploadTemp') && r.n === 4 ? 'hold' : 'pass')

    const interrupted = cli(['upload', SAMPLE, '--url', proxy.url, '--chunk-size', String(CHUNK), '--retries', '0'], stateDir)
    await proxy.held()
    await first.kill()
    second = await startDevice({ dataDir: first.dataDir })
    proxy.target = second.url
    proxy.releaseHeld()

    const broken = await interrupted
    expect(broken.code).toBe(4)
    expect(JSON.parse(broken.stderr).error.kind).toBe('network')
    const [file] = resumeFiles(stateDir)
    expect(file).toBeDefined()
    const record = JSON.parse(readFileSync(path.join(stateDir, 'uploads', file!), 'utf8'))
    expect(record).toEqual(expect.objectContaining({ fileName: 'sample1.jpg', size: SAMPLE_SIZE, chunkSize: CHUNK, purpose: 'image', uploadId: expect.any(String) }))

    proxy.rule = () => 'pass'
    const resumed = await cli(['upload', SAMPLE, '--url', proxy.url, '--chunk-size', String(CHUNK)], stateDir)
    expect(resumed.stderr).toBe('')
    expect(resumed.code).toBe(0)
    expect(JSON.parse(resumed.stdout)).toEqual({ uploadId: record.uploadId, totalChunks: Math.ceil(SAMPLE_SIZE / CHUNK), resumedFromChunk: 3, resumed: true })
    // spec 4.12.3: after completion the local resume identity is deleted.
    expect(resumeFiles(stateDir)).toEqual([])
  })

  test('cancel-upload releases a stored upload and deletes its resume identity (spec 4.6)', async () => {
    const stateDir = newStateDir()
    const proxy = await startProxy(device.url)
    cleanups.push(() => proxy.close())
    proxy.rule = (r) => (r.path.endsWith('/uploadTemp') && r.n === 3 ? 'drop-mid-body' : 'pass')
    const broken = await cli(['upload', SAMPLE, '--url', proxy.url, '--chunk-size', String(CHUNK), '--retries', '0'], stateDir)
    expect(broken.code).toBe(4)
    expect(resumeFiles(stateDir)).toHaveLength(1)
    const before = await activeSessions()

    const cancelled = await cli(['cancel-upload', SAMPLE, '--url', device.url], stateDir)
    expect(cancelled.code).toBe(0)
    expect(JSON.parse(cancelled.stdout)).toEqual({ cancelled: true, uploadId: expect.any(String) })
    expect(resumeFiles(stateDir)).toEqual([])
    expect(await activeSessions()).toBe(before - 1)
  })

  test('a connection dropped mid-chunk is resumed within the same run (--retries)', async () => {
    const stateDir = newStateDir()
    const proxy = await startProxy(device.url)
    cleanups.push(() => proxy.close())
    proxy.rule = (r) => (r.path.endsWith('/uploadTemp') && r.n === 5 ? 'drop-mid-body' : 'pass')
    const result = await cli(['upload', SAMPLE, '--url', proxy.url, '--chunk-size', String(CHUNK), '--retries', '2'], stateDir)
    expect(result.code).toBe(0)
    expect(result.stderr).toMatch(/connection lost .*; resuming, attempt 1/)
    expect(JSON.parse(result.stdout)).toEqual(expect.objectContaining({ totalChunks: Math.ceil(SAMPLE_SIZE / CHUNK), resumed: false }))
    // After the drop the upload went on by resending chunk 0 with the same clientRequestId (spec 4.12.2).
    const uploads = proxy.seen.filter((r) => r.path.endsWith('/uploadTemp'))
    expect(uploads).toHaveLength(Math.ceil(SAMPLE_SIZE / CHUNK) + 2)
    expect(resumeFiles(stateDir)).toEqual([])
  })
})
