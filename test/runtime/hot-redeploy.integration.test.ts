import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import { deviceTest } from '../helpers/device-fixture.ts'
import { INITIAL_PASSWORD, type DeviceProcess } from '../helpers/device.ts'
import { md5Hex } from '../../shared/auth/password.ts'

// The device serves bundles from its own copy of dist/functions (inside the project, so that
// the bundles still resolve node_modules), which this test replaces under it.
const distRoot = path.resolve('dist')

const waitFor = async (check: () => Promise<boolean>, timeoutMs = 10_000) => {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error('condition not met in time')
}

/** Replaces a bundle the way a deploy does: write elsewhere, rename over the old one. */
function replaceBundle(file: string, edit: (code: string) => string) {
  const code = readFileSync(file, 'utf8')
  const edited = edit(code)
  expect(edited).not.toBe(code)
  writeFileSync(`${file}.new`, edited)
  renameSync(`${file}.new`, file)
}

/** The file's own copy of the build, which the device serves its bundles from (removed after the device stopped). */
// eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from this pattern
const test = deviceTest.extend('outdir', { scope: 'file' }, async ({}, { onCleanup }) => {
  const outdir = mkdtempSync(path.join(distRoot, 'hot-redeploy-'))
  onCleanup(() => rmSync(outdir, { recursive: true, force: true }))
  cpSync(path.join(distRoot, 'functions'), path.join(outdir, 'functions'), { recursive: true })
  return outdir
})
test.override('deviceOptions', { scope: 'file' }, async ({ outdir }: { outdir: string }) => ({ env: { FUNCTIONS_DIR: path.join(outdir, 'functions') } }))

test.describe('hot redeploy of one handler bundle', () => {
  let device: DeviceProcess
  let outdir: string
  test.beforeAll(async ({ device: started, outdir: folder }) => {
    device = started
    outdir = folder
  })

  const probe = async () => (await (await fetch(`${device.url}/v1/cwai/aihost/Probe`)).json()).resData

  test('serves a replaced bundle without a restart', async () => {
    expect(await probe()).not.toHaveProperty('redeployed')
    replaceBundle(path.join(outdir, 'functions/aihost/Probe.mjs'), (code) => code.replace('alive: true,', 'alive: true, redeployed: "v2",'))
    await waitFor(async () => (await probe()).redeployed === 'v2')
    expect(device.process.exitCode).toBeNull()
  })

  test('restores the original with `node build.mjs --only aihost/Probe`', async () => {
    // Not execFileSync: a blocked event loop keeps fetch from seeing the server close its idle
    // keep-alive socket, and the next probe then fails with "other side closed".
    await promisify(execFile)(process.execPath, ['build.mjs', '--only', 'aihost/Probe', '--outdir', outdir])
    await waitFor(async () => !('redeployed' in (await probe())))
  })

  test('lets a request in flight finish on the old code while new requests get the new code', async () => {
    const encoder = new TextEncoder()
    let push!: (text: string | null) => void
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (text) => (text === null ? controller.close() : controller.enqueue(encoder.encode(text)))
      },
    })
    const inFlight = fetch(`${device.url}/gtw/cwai/login/DoLogin`, { method: 'POST', body, duplex: 'half', headers: { 'content-type': 'application/json' } } as RequestInit)
    push('{"account":"admin",')
    await new Promise((resolve) => setTimeout(resolve, 200))

    replaceBundle(path.join(outdir, 'functions/login/DoLogin.mjs'), (code) => code.replace('accountName: user.accountName,', 'accountName: "v2:" + user.accountName,'))
    const signIn = () => device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(INITIAL_PASSWORD) })
    await waitFor(async () => (await signIn()).body.resData?.accountName === 'v2:admin')

    push(`"pwd":"${md5Hex(INITIAL_PASSWORD)}"}`)
    push(null)
    const response = await inFlight
    expect(response.status).toBe(200)
    expect((await response.json()).resData.accountName).toBe('admin')
  })
})
