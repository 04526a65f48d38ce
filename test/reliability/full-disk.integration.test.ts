import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import { deviceTest } from '../helpers/device-fixture.ts'
import { samplePath } from '../inference/helpers.ts'

const sample1 = readFileSync(samplePath(1)).toString('base64')
const MB = 1024 * 1024

/** Writes zeros into `file` until the filesystem refuses (ENOSPC); returns the bytes written. */
function fillDisk(file: string): number {
  const fd = openSync(file, 'w')
  const chunk = Buffer.alloc(MB)
  let written = 0
  try {
    for (;;) written += writeSync(fd, chunk)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
  } finally {
    closeSync(fd)
  }
  // The last partial megabyte, byte-sized pieces: nothing is left.
  const tail = openSync(file, 'a')
  try {
    for (;;) written += writeSync(tail, Buffer.alloc(4096))
  } catch { /* full */ } finally { closeSync(tail) }
  return written
}

/** A small filesystem of the file's own (tmpfs, mounted as root), unmounted after the device stopped. */
// eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from this pattern
const test = deviceTest.extend('mountPoint', { scope: 'file' }, async ({}, { onCleanup }) => {
  const mountPoint = mkdtempSync(path.join(tmpdir(), 'full-disk-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', mountPoint])
  } catch (error) {
    rmSync(mountPoint, { recursive: true, force: true })
    throw error
  }
  onCleanup(() => {
    execFileSync('umount', ['-l', mountPoint])
    rmSync(mountPoint, { recursive: true, force: true })
  })
  return mountPoint
})
test.override('deviceOptions', { scope: 'file' }, async ({ mountPoint }: { mountPoint: string }) => ({ dataDir: path.join(mountPoint, 'data') }))

/**
 * The device's data folder on a small filesystem of its own, filled up while the device runs: it
 * must keep answering, analysing and reading.
 */
test.describe('a full disk under DATA_DIR', () => {
  test('keeps serving detections and reads while nothing can be written, counts the log lines it dropped, and logs again once space returns', async ({ device, mtk, mountPoint }) => {
    const taskId = randomUUID()
    expect((await device.post('/gtw/cwai/aihost/PTaskCreate', { taskId, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }, mtk)).body.resCode).toBe(1)
    const filler = path.join(mountPoint, 'filler')
    expect(fillDisk(filler)).toBeGreaterThan(0)

    // Every request writes an access-log line; detections also write activity and pictures.
    for (let i = 0; i < 30; i++) {
      const detected = await device.post('/gtw/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode: 'face-detection', imageBase64: sample1 }, mtk)
      expect(detected.body.resCode).toBe(1)
      expect(detected.body.resData.areaList.flatMap((a: { targetList: unknown[] }) => a.targetList)).toHaveLength(3)
      expect((await device.post('/v1/cwai/aihost/QueryTaskStatus', { taskId }, mtk)).body.resCode).toBe(1)
    }
    // Requests that must write answer with the envelope (a refusal), and the device goes on.
    const writers: [string, unknown][] = [
      ['/gtw/cwai/login/DoLogin', { account: 'admin', pwd: '0'.repeat(32) }],
      ['/gtw/cwai/System/SetHttpParam', { timeoutMs: 4000 }],
      ['/gtw/cwai/aihost/PTaskCreate', { taskId: randomUUID(), algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }],
    ]
    for (const [route, body] of writers) {
      const answer = await device.post(route, body, mtk)
      expect(typeof answer.body.resCode, route).toBe('number')
      expect(device.process.exitCode, route).toBeNull()
    }
    const status = (await device.post('/gtw/cwai/System/QueryDeviceStatus', {}, mtk)).body.resData
    expect(status.logFile).toMatchObject({ writable: false, lastError: 'ENOSPC' })
    expect(status.logFile.writeErrors).toBeGreaterThan(0)
    expect(device.process.exitCode).toBeNull()

    // Space comes back: the lines kept in memory and new ones reach the file again.
    rmSync(filler)
    const marker = randomUUID()
    await device.post('/v1/cwai/aihost/QueryTaskStatus', { taskId }, mtk, { 'x-request-id': marker })
    let found = 0
    for (let i = 0; i < 50 && found === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      const logs = await device.post('/v1/cwai/aihost/QueryLogs', { requestId: marker, pageNo: 1, pageSize: 10 }, mtk)
      found = logs.body.resData?.total ?? 0
    }
    expect(found).toBeGreaterThan(0)
    expect((await device.post('/gtw/cwai/System/QueryDeviceStatus', {}, mtk)).body.resData.logFile.writable).toBe(true)
  })
})
