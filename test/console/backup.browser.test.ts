/**
 * The console's "Backup and reset" page (README "Backup, restore and factory reset") in real
 * Chromium against the real device run by its supervisor: a backup downloaded, damaged and
 * wrongly unlocked backups refused with the device's reasons shown, the factory reset behind
 * its confirmation, and the restore that brings the device's data and accounts back.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import type { Page, Route } from 'playwright-core'
import { browserTest as test, openConsole } from '../helpers/browser.ts'
import { CHANGED_PASSWORD, INITIAL_PASSWORD, type DeviceProcess } from '../helpers/device.ts'
import { md5Hex } from '../../shared/auth/password.ts'
import { deviceDiagnosis } from '../helpers/processes.ts'
import { catalogue } from '../../shared/errors/catalogue.ts'

const PASSPHRASE = 'console passphrase'
const RESET_PASSWORD = 'after-Reset-2'
const work = mkdtempSync(path.join(tmpdir(), 'console-backup-'))

test.override('deviceOptions', { entry: 'supervisor' })

let device: DeviceProcess

test.beforeAll(async ({ device: started, mtk }) => {
  device = started
  expect((await device.post('/gtw/cwai/Library/AddLibrary', { galleryId: 'staff', name: 'Staff' }, mtk)).body.resCode).toBe(1)
}, 180_000)
test.afterAll(() => {
  rmSync(work, { recursive: true, force: true })
})

/** The galleries the device has, asked over the API with a session of its own. */
async function galleries(password: string): Promise<string[]> {
  const login = await device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(password) })
  const page = await device.post('/gtw/cwai/Library/LibraryPage', {}, login.body.resData.mtk)
  return page.body.resData.rows.map((r: { galleryId: string }) => r.galleryId)
}

async function signIn(page: Page, password: string) {
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

test.describe('console: backup and reset', () => {
  test('downloads a backup, shows refusals, resets the device after its confirmation and restores the backup (1440 px)', { timeout: 600_000 }, async ({ browser, onTestFailed }) => {
    // A restore that never comes back is told by the device's own last lines (supervisor and server).
    onTestFailed(() => { console.error(`the device's last log lines:\n${device.logs.slice(-120).map((l) => JSON.stringify(l)).join('\n')}\n${deviceDiagnosis(device.process.pid!, device.dataDir)}`) })
    const { page, foreignRequests, pageErrors, screenshot, context } = await openConsole(browser, device.url, 1440)
    await page.goto(device.url + '/console/#/backup')
    await signIn(page, CHANGED_PASSWORD)
    await page.getByRole('heading', { name: 'Backup and reset', level: 1 }).waitFor()

    // Back up: the passphrase twice, the same.
    await page.getByTestId('backup-passphrase').fill(PASSPHRASE)
    await page.getByTestId('backup-passphrase-again').fill(`${PASSPHRASE}!`)
    await page.getByTestId('passphrase-mismatch').waitFor()
    expect(await page.getByTestId('create-backup').isDisabled()).toBe(true)
    await page.getByTestId('backup-passphrase-again').fill(PASSPHRASE)
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('create-backup').click()])
    expect(download.suggestedFilename()).toMatch(/^EdgeAIDevice-backup-V\d+\.\d+\.\d+-\d{8}T\d{6}Z\.tar\.gz$/)
    const backupFile = path.join(work, download.suggestedFilename())
    await download.saveAs(backupFile)
    await page.getByTestId('backup-notice').filter({ hasText: 'Keep the passphrase' }).waitFor()
    await screenshot('backup')

    // A damaged backup and the wrong passphrase: the device's reasons are shown, nothing changes.
    const truncated = path.join(work, 'truncated.tar.gz')
    writeFileSync(truncated, readFileSync(backupFile).subarray(0, 200))
    const restore = async (file: string, passphrase: string) => {
      await page.getByTestId('restore-file').setInputFiles(file)
      await page.getByTestId('restore-passphrase').fill(passphrase)
      await page.getByTestId('restore').click()
    }
    await restore(truncated, PASSPHRASE)
    const error = page.locator('form[aria-labelledby="restore-heading"]').getByTestId('error')
    await error.getByTestId('error-text').filter({ hasText: catalogue.BackupArchiveCorrupt.msgText }).waitFor()
    expect(await error.getByTestId('error-key').textContent()).toBe('api.error.BackupArchiveCorrupt')
    await restore(backupFile, 'not the passphrase')
    await error.getByTestId('error-text').filter({ hasText: catalogue.BackupAuthenticationFailed.msgText }).waitFor()
    await screenshot('backup-refused')
    expect(await galleries(CHANGED_PASSWORD)).toEqual(['staff'])

    // Factory reset: the dialog first; Cancel changes nothing.
    await page.getByTestId('factory-reset').click()
    const dialog = page.getByRole('dialog', { name: 'Reset the device to its factory state?' })
    await dialog.waitFor()
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'detached' })
    expect(await galleries(CHANGED_PASSWORD)).toEqual(['staff'])
    await page.getByTestId('factory-reset').click()
    await dialog.getByRole('button', { name: 'Reset the device' }).click()
    await page.getByTestId('restarting').waitFor()
    await page.getByTestId('notice').filter({ hasText: 'reset to its factory state' }).waitFor({ timeout: 180_000 })

    // The first sign-in of a new device, then the restore of the backup.
    await signIn(page, INITIAL_PASSWORD)
    await page.getByRole('heading', { name: 'Change password', level: 1 }).waitFor()
    await page.getByLabel('New password', { exact: true }).fill(RESET_PASSWORD)
    await page.getByLabel('Repeat new password').fill(RESET_PASSWORD)
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByRole('heading', { name: 'Backup and reset', level: 1 }).waitFor()
    expect(await galleries(RESET_PASSWORD)).toEqual([])
    // A poll of the console's own (the metrics, every 5 s) in flight across the restart and
    // answered 401 after the restore's notice is shown must not replace it with "Your session has
    // ended": the restart's polls are held until one metrics request is, and that one until then.
    let heldMetrics: Route | null = null
    let metricsHeld!: () => void
    const metricsSeen = new Promise<void>((resolve) => { metricsHeld = resolve })
    await page.route('**/gtw/cwai/System/Metrics', async (route) => {
      if (heldMetrics) return route.continue()
      heldMetrics = route
      metricsHeld()
    })
    await page.route('**/gtw/cwai/System/BackupStatus', async (route) => { await metricsSeen; await route.continue() })
    await restore(backupFile, PASSPHRASE)
    await page.getByTestId('restarting').waitFor()
    await page.getByTestId('notice').filter({ hasText: 'restored the backup' }).waitFor({ timeout: 180_000 })
    const lateAnswer = page.waitForResponse('**/gtw/cwai/System/Metrics')
    await heldMetrics!.continue()
    expect((await lateAnswer).status()).toBe(401)
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 500)))
    expect(await page.getByTestId('notice').filter({ hasText: 'restored the backup' }).count()).toBe(1)
    expect(await page.getByText('Your session has ended').count()).toBe(0)
    await page.unroute('**/gtw/cwai/System/Metrics')
    await page.unroute('**/gtw/cwai/System/BackupStatus')
    await signIn(page, CHANGED_PASSWORD)
    await page.getByRole('heading', { name: 'Backup and reset', level: 1 }).waitFor()
    await page.getByTestId('last-restore').filter({ hasText: 'was restored' }).waitFor()
    expect(await galleries(CHANGED_PASSWORD)).toEqual(['staff'])

    expect(foreignRequests).toEqual([])
    // While the device restarts, the page's polls meet refused connections and the final 401.
    expect(pageErrors.filter((e) => !/Failed to load resource|ERR_CONNECTION_REFUSED|status of 40[13]/.test(e))).toEqual([])
    await context.close()
  })
})
