import { describe, expect, it } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { startDevice, INITIAL_PASSWORD, CHANGED_PASSWORD } from '../helpers/device.ts'
import { md5Hex } from '../../shared/auth/password.ts'

test.describe('sign-in, authenticated routes and password change on the real runtime', () => {
  // Not `mtk`: the first test signs in with the initial password itself.
  test('runs the whole sign-in story: MD5 sign-in, pending change, change, old mtk rejected', async ({ device }) => {
    const probe = await fetch(`${device.url}/v1/cwai/aihost/Probe`)
    expect(probe.status).toBe(200)
    expect((await probe.json()).resData.alive).toBe(true)

    const login = await device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(INITIAL_PASSWORD) })
    expect(login.status).toBe(200)
    expect(login.body).toMatchObject({ resCode: 1, resMsg: [], resultCode: '0', resData: { accountName: 'admin', passwordChangeRequired: true } })
    const oldMtk = login.body.resData.mtk as string
    expect(login.headers.get('x-request-id')).toBeTruthy()

    const pending = await device.post('/v1/cwai/aihost/ViewRoutes', {}, oldMtk)
    expect(pending.status).toBe(403)
    expect(pending.body.resCode).toBe(0)
    expect(pending.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.PasswordChangeRequired', recommendedAction: 'CHANGE_PASSWORD', retryable: false })

    const change = await device.post('/gtw/cwai/login/ChangePassword', { oldPwd: md5Hex(INITIAL_PASSWORD), newPwd: md5Hex(CHANGED_PASSWORD) }, oldMtk)
    expect(change.body).toMatchObject({ resCode: 1, resData: { revokedSessions: 1 } })

    const revoked = await device.post('/v1/cwai/aihost/ViewRoutes', {}, oldMtk)
    expect(revoked.status).toBe(401)
    expect(revoked.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.Unauthorized', recommendedAction: 'SIGN_IN_AGAIN' })

    const relogin = await device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(CHANGED_PASSWORD) })
    expect(relogin.body.resData.passwordChangeRequired).toBe(false)
    const routes = await device.post('/v1/cwai/aihost/ViewRoutes', {}, relogin.body.resData.mtk)
    expect(routes.status).toBe(200)
    const paths = routes.body.resData.rows.map((r: { path: string }) => r.path)
    expect(paths).toEqual(expect.arrayContaining(['/gtw/cwai/login/DoLogin', '/v1/cwai/aihost/Probe', '/v1/cwai/aihost/ViewRoutes']))
    expect(routes.body.resData.total).toBe(paths.length)
    const probeRow = routes.body.resData.rows.find((r: { path: string }) => r.path === '/v1/cwai/aihost/Probe')
    expect(probeRow).toMatchObject({ authenticated: false })
    const viewRow = routes.body.resData.rows.find((r: { path: string }) => r.path === '/v1/cwai/aihost/ViewRoutes')
    expect(viewRow).toMatchObject({ authenticated: true })
  })

  test('answers a field of the wrong type with InvalidParam naming the field', async ({ device }) => {
    const wrongType = await device.post('/gtw/cwai/login/DoLogin', { account: 42, pwd: md5Hex('x') })
    expect(wrongType.body.resCode).toBe(0)
    expect(wrongType.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/account' } })
    const plaintext = await device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: 'admin123' })
    expect(plaintext.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/pwd' } })
    const missing = await device.post('/gtw/cwai/login/DoLogin', { account: 'admin' })
    expect(missing.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/pwd' } })
    const malformed = await device.post('/gtw/cwai/login/DoLogin', '{"account":')
    expect(malformed.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam' })
    const notObject = await device.post('/gtw/cwai/login/DoLogin', '[1,2]')
    expect(notObject.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam' })
  })

  test('answers unknown paths with 404 and wrong methods with 405, in the envelope', async ({ device }) => {
    const unknown = await device.post('/gtw/cwai/nothing/Here', {})
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ resCode: 0, resMsg: [{ messageKey: 'api.error.RouteNotFound' }] })
    const get = await fetch(`${device.url}/gtw/cwai/login/DoLogin`)
    expect(get.status).toBe(405)
    expect((await get.json()).resMsg[0].messageKey).toBe('api.error.MethodNotAllowed')
  })

  test('never writes a token or password digest to its logs', async ({ device }) => {
    const secret = md5Hex(CHANGED_PASSWORD)
    const token = await device.adminToken()
    await device.post('/v1/cwai/aihost/ViewRoutes', {}, token)
    const text = JSON.stringify(device.logs)
    expect(text).not.toContain(secret)
    expect(text).not.toContain(token)
  })
})

describe('graceful shutdown', () => {
  it('finishes a request in flight on SIGTERM and exits 0', async () => {
    const device = await startDevice()
    try {
      // A JSON body that arrives slowly keeps the request in flight while SIGTERM arrives.
      const encoder = new TextEncoder()
      let push!: (text: string | null) => void
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          push = (text) => (text === null ? controller.close() : controller.enqueue(encoder.encode(text)))
        },
      })
      const pending = fetch(`${device.url}/gtw/cwai/login/DoLogin`, { method: 'POST', body, duplex: 'half', headers: { 'content-type': 'application/json' } } as RequestInit)
      push(`{"account":"admin",`)
      await new Promise((resolve) => setTimeout(resolve, 300))
      const exited = device.stop()
      await new Promise((resolve) => setTimeout(resolve, 300))
      push(`"pwd":"${md5Hex(INITIAL_PASSWORD)}"}`)
      push(null)
      const response = await pending
      expect((await response.json()).resData.accountName).toBe('admin')
      expect(await exited).toBe(0)
      expect(device.logs.map((l) => l.msg)).toEqual(expect.arrayContaining(['stopping', 'stopped']))
    } finally {
      await device.stop()
      device.cleanup()
    }
  })
})
