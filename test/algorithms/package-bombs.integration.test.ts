/**
 * Algorithm packages that are decompression bombs, over HTTP against the built runtime (spec
 * 4.10 "upload"): uploaded with purpose `algorithm`, installed with `Algorithm/upload`, refused
 * as oversized while the server's peak RSS barely moves and no staging folder is left.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { writeZerosTarGz } from '../helpers/tarball.ts'
import { uploadFile } from '../helpers/upload-file.ts'

const MiB = 1024 * 1024
const GiB = 1024 * MiB
const LIMIT = 768 * MiB
/**
 * Stated bound on the rise of the server's peak RSS (VmHWM, ~280 MB after start-up) over one
 * refused install. Measured with the streamed inflation: under 1 MB for both packages; before
 * it, 978 MB for the lying one (the bomb's 64 MB burst stayed under the start-up peak).
 */
const BOUND_MB = 128

test.override('deviceOptions', { env: { ALGORITHM_PACKAGE_MAX_EXPANDED_BYTES: String(LIMIT) } })

test.describe('algorithm packages that are decompression bombs (spec 4.10)', () => {
  let device: DeviceProcess
  let mtk: string
  let work: string
  const peakMb = () => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${device.process.pid}/status`, 'utf8'))![1]) / 1024
  const packagesDir = () => path.join(device.dataDir, 'algorithm-packages')

  test.beforeAll(async ({ device: started, mtk: session }) => {
    work = mkdtempSync(path.join(tmpdir(), 'package-bombs-'))
    device = started
    mtk = session
  }, 120_000)
  test.afterAll(async () => {
    rmSync(work, { recursive: true, force: true })
  })

  /** Uploads and installs the archive; the refusal and how far the server's peak RSS rose during the install. */
  async function install(file: string) {
    const uploadId = await uploadFile(device, mtk, readFileSync(file), path.basename(file), 'algorithm')
    const before = { peak: peakMb(), packages: readdirSync(packagesDir()) }
    const answer = await device.post('/gtw/cwai/Algorithm/upload', { uploadId }, mtk)
    expect(readdirSync(packagesDir())).toEqual(before.packages)
    return { answer: answer.body, growthMb: peakMb() - before.peak }
  }

  test('a tar.gz of 2 GiB of zeros (about 2 MB) is refused at its header as oversized', async () => {
    const bomb = path.join(work, 'bomb.tar.gz')
    await writeZerosTarGz(bomb, [{ path: 'models/zeros.bin', size: 2 * GiB }])
    const { answer, growthMb } = await install(bomb)
    expect(answer.resCode).not.toBe(1)
    expect(answer.resMsg[0]).toMatchObject({ messageKey: 'api.error.AlgorithmPackageTooLarge', details: { limitBytes: String(LIMIT), atLeastBytes: String(2 * GiB) } })
    expect(growthMb).toBeLessThan(BOUND_MB)
  })

  test('a tar.gz whose file declares 1 KB but that holds 1 GiB more is refused as oversized while inflating', async () => {
    const lying = path.join(work, 'lying.tar.gz')
    await writeZerosTarGz(lying, [{ path: 'models/a.bin', size: 1024 }, { path: 'PaxHeader/flood', type: 'ExtendedHeader', size: GiB }], { level: 1 })
    const { answer, growthMb } = await install(lying)
    expect(answer.resMsg[0]).toMatchObject({ messageKey: 'api.error.AlgorithmPackageTooLarge', details: { limitBytes: String(LIMIT) } })
    expect(growthMb).toBeLessThan(BOUND_MB)
  })
})
