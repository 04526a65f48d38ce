import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { runCli } from '../../runtime/cli/main.ts'
import { FileResumeStore } from '../../runtime/client/node.ts'
import { CHANGED_PASSWORD, INITIAL_PASSWORD } from '../helpers/device.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'

const stateDir = mkdtempSync(path.join(tmpdir(), 'device-cli-state-'))
test.afterAll(() => rmSync(stateDir, { recursive: true, force: true }))

async function cli(...argv: string[]) {
  const out: string[] = []
  const err: string[] = []
  const code = await runCli([...argv, '--state-dir', stateDir], { out: (t) => out.push(t), err: (t) => err.push(t), env: {} })
  return { code, stdout: out.join('\n'), stderr: err.join('\n') }
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

test.describe('device-cli usage errors (exit 2)', () => {
  test.each([
    [[], /no command given/],
    [['frobnicate', '--password', 'x'], /unknown command "frobnicate"/],
    [['algorithms', '--password', 'x', '--colour'], /Unknown option '--colour'/],
    [['detect', 'a.jpg', '--password', 'x'], /detect needs --algorithm <id>/],
    [['detect', '--password', 'x', '--algorithm', 'face'], /detect takes <image>/],
    [['detect', 'x.jpg', 'y.jpg', '--password', 'x', '--algorithm', 'face'], /detect takes <image>/],
    [['upload', 'x.jpg', '--password', 'x', '--chunk-size', '0'], /--chunk-size must be a positive integer/],
    [['upload', 'x.jpg', '--password', 'x', '--retries=-1'], /--retries must be a non-negative integer/],
    [['algorithms'], /a password is needed/],
    [['algorithms', '--password', 'x', '--url', 'ftp://device'], /--url must be an http\(s\) address/],
  ])('%j', async (argv, message) => {
    const result = await cli(...(argv as string[]))
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(message as RegExp)
    expect(result.stdout).toBe('')
  })

  test('a missing image file is a usage error naming the file, found before the device is called', async () => {
    const port = await closedPort()
    const result = await cli('detect', '/nonexistent/photo.jpg', '--algorithm', 'face', '--password', 'x', '--url', `http://127.0.0.1:${port}`)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/cannot read \/nonexistent\/photo\.jpg/)
  })

  test('--help prints usage and exits 0', async () => {
    const result = await cli('--help')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/Exit codes: 0 success · 2 usage error · 3 device error/)
  })
})

test.describe('device-cli network errors (exit 4)', () => {
  test('an unreachable device is a network error, as text and as JSON', async () => {
    const port = await closedPort()
    const text = await cli('algorithms', '--password', 'x', '--url', `http://127.0.0.1:${port}`)
    expect(text.code).toBe(4)
    expect(text.stderr).toContain(`network error: cannot reach the device at http://127.0.0.1:${port}/gtw/cwai/login/DoLogin: ECONNREFUSED`)
    const json = await cli('algorithms', '--password', 'x', '--url', `http://127.0.0.1:${port}`, '--json')
    expect(json.code).toBe(4)
    expect(JSON.parse(json.stderr)).toEqual({ exitCode: 4, error: expect.objectContaining({ kind: 'network', route: '/gtw/cwai/login/DoLogin' }) })
  })
})

// The device is not signed in first: the CLI meets its initial password (spec 5.7).
test.describe('device-cli against the real runtime', () => {
  test('a wrong password is a device error (exit 3) with messageKey and action', async ({ device }) => {
    const result = await cli('login', '--url', device.url, '--password', 'not-the-password', '--json')
    expect(result.code).toBe(3)
    const { error } = JSON.parse(result.stderr)
    expect(error).toEqual(expect.objectContaining({ kind: 'device', messageKey: 'api.error.LoginFailed', recommendedAction: 'CHECK_REQUEST_PARAMETERS', retryable: false }))
  })

  test('signs in with the initial password, is refused business use, changes the password, then works (spec 5.7)', async ({ device }) => {
    const first = await cli('login', '--url', device.url, '--password', INITIAL_PASSWORD, '--json')
    expect(first.code, first.stderr).toBe(0)
    expect(JSON.parse(first.stdout)).toEqual({ accountName: 'admin', passwordChangeRequired: true })

    const refused = await cli('docs', '--url', device.url, '--password', INITIAL_PASSWORD)
    expect(refused.code).toBe(3)
    expect(refused.stderr).toContain('api.error.PasswordChangeRequired')
    expect(refused.stderr).toContain('action: CHANGE_PASSWORD')

    const changed = await cli('login', '--url', device.url, '--password', INITIAL_PASSWORD, '--new-password', CHANGED_PASSWORD, '--json')
    expect(changed.code).toBe(0)
    expect(JSON.parse(changed.stdout)).toEqual({ accountName: 'admin', passwordChangeRequired: false, passwordChanged: true })

    const docs = await cli('docs', '--url', device.url, '--password', CHANGED_PASSWORD, '--json')
    expect(docs.code).toBe(0)
    expect(JSON.parse(docs.stdout)).toEqual({ http: '/staticfile/httpInterface.html', mqtt: '/staticfile/mqttInterface.html', openapi: '/staticfile/openapi.json' })
    // The old password no longer signs in.
    expect((await cli('docs', '--url', device.url, '--password', INITIAL_PASSWORD)).code).toBe(3)
  })

  test('the installed bin exits with the same codes as a process', ({ device }) => {
    const bin = path.resolve('runtime/device-cli.mjs')
    const ok = spawnSync(process.execPath, [bin, 'docs', '--url', device.url, '--password', CHANGED_PASSWORD], { encoding: 'utf8' })
    expect(ok.status, ok.stderr).toBe(0)
    expect(ok.stdout).toMatch(/http\s+\/staticfile\/httpInterface\.html/)
    const usage = spawnSync(process.execPath, [bin, 'detect'], { encoding: 'utf8' })
    expect(usage.status).toBe(2)
    const wrong = spawnSync(process.execPath, [bin, 'docs', '--url', device.url, '--password', 'nope'], { encoding: 'utf8' })
    expect(wrong.status).toBe(3)
  })
})

test.describe('resume identities on disk (spec 4.12)', () => {
  const record = {
    clientRequestId: '6f1c1b7e-2c1e-4c1a-9d0e-6b3f2a9e8d11', uploadId: null, fileName: 'a.jpg', size: 10, purpose: 'image',
    chunkSize: 4, totalChunks: 3, createdAt: '2026-01-01T00:00:00.000Z',
  }

  test('saves, loads and removes one file per upload, readable only by the owner', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'resume-'))
    const store = new FileResumeStore(dir)
    expect(await store.load('k1')).toBeNull()
    await store.save('k1', record)
    expect(await store.load('k1')).toEqual(record)
    const files = readdirSync(path.join(dir, 'uploads'))
    expect(files).toEqual(['k1.json'])
    expect((await import('node:fs')).statSync(path.join(dir, 'uploads', 'k1.json')).mode & 0o777).toBe(0o600)
    await store.save('k1', { ...record, uploadId: 'u-1' })
    expect((await store.load('k1'))?.uploadId).toBe('u-1')
    await store.remove('k1')
    expect(await store.load('k1')).toBeNull()
    expect(readdirSync(path.join(dir, 'uploads'))).toEqual([])
    rmSync(dir, { recursive: true, force: true })
  })

  test('a corrupt or foreign file is no resume identity', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'resume-'))
    const store = new FileResumeStore(dir)
    await store.save('k2', record)
    writeFileSync(path.join(dir, 'uploads', 'k2.json'), '{"clientRequestId": ')
    expect(await store.load('k2')).toBeNull()
    writeFileSync(path.join(dir, 'uploads', 'k2.json'), '{"hello": "world"}')
    expect(await store.load('k2')).toBeNull()
    expect(readFileSync(path.join(dir, 'uploads', 'k2.json'), 'utf8')).toContain('hello')
    rmSync(dir, { recursive: true, force: true })
  })

  test('keys never become paths outside the folder', async () => {
    const store = new FileResumeStore(stateDir)
    for (const key of ['../escape', 'a/b', '', '..']) {
      await expect(store.save(key, record)).rejects.toThrow(/bad resume key/)
    }
  })
})
