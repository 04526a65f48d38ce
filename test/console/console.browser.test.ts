import { expect } from 'vitest'
import { browserTest as test, openConsole } from '../helpers/browser.ts'
import { CHANGED_PASSWORD, INITIAL_PASSWORD } from '../helpers/device.ts'

test.describe('console: sign-in, forced password change, sign-out, 401', () => {
  test('signs in with the initial password, must change it, and reaches the detection page (375 px)', { timeout: 180_000 }, async ({ device, browser }) => {
    const { page, foreignRequests, pageErrors, screenshot, context } = await openConsole(browser, device.url, 375)
    await page.goto(device.url + '/')
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await screenshot('sign-in')

    // A wrong password shows the device's messageKey text and action.
    await page.getByLabel('Password').fill('wrong-password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByTestId('error').waitFor()
    expect(await page.getByTestId('error-key').textContent()).toBe('api.error.LoginFailed')
    expect(await page.getByTestId('error-text').textContent()).toBe('Account or password is wrong.')

    // Keyboard only: type the password and press Enter.
    await page.getByLabel('Password').fill(INITIAL_PASSWORD)
    await page.getByLabel('Password').press('Enter')
    await page.getByRole('heading', { name: 'Change password' }).waitFor()
    expect(await page.getByTestId('forced-change').isVisible()).toBe(true)
    await screenshot('change-password')

    await page.getByLabel('New password', { exact: true }).fill(CHANGED_PASSWORD)
    await page.getByLabel('Repeat new password').fill(CHANGED_PASSWORD + 'x')
    expect(await page.getByText('The passwords differ.').isVisible()).toBe(true)
    expect(await page.getByRole('button', { name: 'Change password' }).isDisabled()).toBe(true)
    await page.getByLabel('Repeat new password').fill(CHANGED_PASSWORD)
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByRole('heading', { name: 'Detection' }).waitFor()
    expect(await page.getByTestId('account').textContent()).toBe('admin')

    // The device agrees: the old password is gone, the new one signs in without a pending change.
    const login = await device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: (await import('../../runtime/client/md5.ts')).md5Hex(CHANGED_PASSWORD) })
    expect(login.body.resData.passwordChangeRequired).toBe(false)
    await screenshot('detect-empty')

    // The password left the browser only as an MD5 digest.
    expect(foreignRequests).toEqual([])
    expect(pageErrors.filter((e) => !/status of 40[134]/.test(e))).toEqual([])
    await context.close()
  })

  test('signs out, and a 401 anywhere returns to sign-in (1440 px)', { timeout: 180_000 }, async ({ device, browser }) => {
    const lockedAccount = `someone-else-${Date.now()}`
    const { page, foreignRequests, screenshot, context } = await openConsole(browser, device.url, 1440)
    await page.goto(device.url + '/console/')
    await page.getByLabel('Password').fill(CHANGED_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Detection' }).waitFor()
    await screenshot('detect-empty')

    await page.getByRole('link', { name: 'Device' }).click()
    await page.getByRole('heading', { name: 'Device' }).waitFor()
    await page.getByRole('heading', { name: 'Status' }).waitFor()
    await page.getByTestId('route-count').waitFor()
    // spec 4.11: the status shows the device's bootId and softwareVersion.
    const status = await device.post('/gtw/cwai/System/QueryDeviceStatus', {}, await device.adminToken())
    await page.getByTestId('status').getByText(status.body.resData.bootId).waitFor()
    // Labels in words; the value exactly as the device sent it.
    expect(await page.getByTestId('status').textContent()).toContain(`Software version${status.body.resData.softwareVersion}`)
    expect(await page.getByTestId('status').locator('dd[data-field="softwareVersion"]').textContent()).toBe(status.body.resData.softwareVersion)
    const routes = await device.post('/v1/cwai/aihost/ViewRoutes', {}, await device.adminToken())
    expect(await page.getByTestId('route-count').textContent()).toBe(String(routes.body.resData.total))
    // Live events over the WebSocket listener: a lockout raised now shows up.
    // Generous waits: under a loaded CI machine other devices and sidecars start in parallel.
    await page.getByTestId('events-state').filter({ hasText: 'Live' }).waitFor({ timeout: 60_000 })
    for (let i = 0; i < 5; i++) await device.post('/gtw/cwai/login/DoLogin', { account: lockedAccount, pwd: '0'.repeat(32) })
    await page.locator('.event-list li', { hasText: lockedAccount }).waitFor({ timeout: 60_000 })
    const lockedEvent = await page.locator('.event-list li', { hasText: lockedAccount }).textContent()
    expect(lockedEvent).toContain('login.locked')
    expect(lockedEvent).toContain(`"accountName":"${lockedAccount}"`)
    await screenshot('device')

    await page.getByTestId('sign-out').click()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    expect(await page.getByTestId('notice').textContent()).toBe('Signed out.')
    expect(await page.evaluate(() => sessionStorage.getItem('device-console.session'))).toBeNull()

    // Sign in again (back on the page that was open), then revoke the session behind the
    // console's back while the Device page's queries are on their way (held here until the
    // revocation): their 401 returns to sign-in by itself.
    let release!: () => void
    const held = new Promise<void>((resolve) => { release = resolve })
    const hold = /\/(gtw|v1)\//
    await page.route(hold, async (route) => {
      if (!route.request().url().endsWith('/login/DoLogin')) await held
      await route.continue()
    })
    await page.getByLabel('Password').fill(CHANGED_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Device' }).waitFor()
    const revoke = async () => {
      const mtk = await page.evaluate(() => JSON.parse(sessionStorage.getItem('device-console.session')!).mtk as string)
      expect((await device.post('/gtw/cwai/login/Logout', {}, mtk)).body.resCode).toBe(1)
    }
    await revoke()
    release()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    expect(await page.getByTestId('notice').textContent()).toBe('Your session has ended. Sign in again.')
    await page.unroute(hold)
    // A reload right after still says why (the reason outlives the page until the next sign-in).
    await page.reload()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    expect(await page.getByTestId('notice').textContent()).toBe('Your session has ended. Sign in again.')

    // A reload with a revoked session still stored: the first query's 401 returns to sign-in.
    await page.getByLabel('Password').fill(CHANGED_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByTestId('route-count').waitFor()
    expect(await page.evaluate(() => sessionStorage.getItem('device-console.notice'))).toBeNull()
    await revoke()
    await page.reload()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    expect(await page.getByTestId('notice').textContent()).toBe('Your session has ended. Sign in again.')
    expect(foreignRequests).toEqual([])
    await context.close()
  })

  test('is keyboard-usable: Tab reaches the sign-in fields and button in order', { timeout: 120_000 }, async ({ device, browser }) => {
    const { page, context } = await openConsole(browser, device.url, 375)
    await page.goto(device.url + '/console/')
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    const focused = async () => page.evaluate(() => {
      const el = document.activeElement as HTMLElement
      return el?.getAttribute('name') ?? el?.textContent?.trim() ?? el?.tagName
    })
    const order: (string | null)[] = []
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Tab')
      order.push(await focused())
    }
    expect(order).toEqual(['Skip to content', 'account', 'password', 'Sign in'])
    await context.close()
  })
})
