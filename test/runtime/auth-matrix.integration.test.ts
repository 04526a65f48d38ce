import { readFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'

// spec 5.2: only DoLogin and Probe are anonymous; every other mounted route answers 401 without a valid mtk.
const manifest = JSON.parse(readFileSync('dist/functions/manifest.json', 'utf8')) as {
  routes: Record<string, { auth: string; methods: string[] }>
}
const ANONYMOUS = ['/gtw/cwai/login/DoLogin', '/v1/cwai/aihost/Probe']
const protectedRoutes = Object.entries(manifest.routes).filter(([path]) => !ANONYMOUS.includes(path))

test.describe('authentication matrix over every route in the manifest', () => {
  let device: DeviceProcess
  test.beforeAll(async ({ device: started }) => {
    device = started
  })

  test('marks exactly DoLogin and Probe as anonymous', () => {
    const anonymous = Object.entries(manifest.routes).filter(([, r]) => r.auth === 'anonymous').map(([path]) => path).sort()
    expect(anonymous).toEqual([...ANONYMOUS].sort())
    expect(protectedRoutes.length).toBeGreaterThan(0)
  })

  test.each(protectedRoutes)('%s refuses a request without mtk and one with a random mtk', async (path, route) => {
    const method = route.methods.includes('POST') ? 'POST' : route.methods[0]!
    for (const headers of [{}, { mtk: randomBytes(32).toString('base64url') }] as Record<string, string>[]) {
      const response = await fetch(device.url + path, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        ...(method === 'GET' || method === 'HEAD' ? {} : { body: '{}' }),
      })
      expect(response.status).toBe(401)
      const body = await response.json()
      expect(body).toMatchObject({ resCode: 0, resMsg: [{ messageKey: 'api.error.Unauthorized' }] })
    }
  })
})
