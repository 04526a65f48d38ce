import { test as base } from 'vitest'
import { startDevice, type StartOptions } from './device.ts'

/**
 * The device of a test file: the built runtime started once, on the file's first test (or
 * `test.beforeAll`) that asks for it, with its own free ports and data folder, stopped and
 * removed after the file's last test. `mtk` is the administrator's session on it (the initial
 * password changed first when the device asks for that).
 *
 *   import { deviceTest as test } from '../helpers/device-fixture.ts'
 *   test.override('deviceOptions', { env: { EVENT_POLL_MS: '100' } })   // the file's settings
 *   test('…', async ({ device, mtk }) => { … })
 *
 * Files that run several devices, restart one on the same data folder, or run a release
 * executable call `startDevice` themselves.
 */
export const deviceTest = base
  .extend('deviceOptions', { scope: 'file' }, {} as StartOptions)
  .extend('device', { scope: 'file' }, async ({ deviceOptions }, { onCleanup }) => {
    const device = await startDevice(deviceOptions)
    onCleanup(async () => {
      await device.stop()
      device.cleanup()
    })
    return device
  })
  .extend('mtk', { scope: 'file' }, async ({ device }) => device.adminToken())
