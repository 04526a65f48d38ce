import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import type { Identity } from '../../shared/handler.ts'
import EventPage from '../../functions/event/EventPage.ts'
import ExportAlarms from '../../functions/event/ExportAlarms.ts'
import PassengerFlowStatistics from '../../functions/event/PassengerFlowStatistics.ts'
import { InputValidator } from '../../runtime/http/validate.ts'

const admin: Identity = { userId: 'u', accountName: 'admin', sessionId: 's', transport: 'http', passwordChangeRequired: false }
const T0 = Date.parse('2026-03-01T10:15:00Z')
const HOUR = 3600_000

// Event category handlers on a real database, called with a test ctx.
describe('Event endpoints', () => {
  let t: TestRuntime
  const validator = new InputValidator()
  const call = async <I>(handler: { input: any; handle(input: I, ctx: any): unknown }, input: unknown) =>
    handler.handle(validator.validate(handler.input, input) as I, t.ctx(admin)) as Promise<any>

  beforeAll(async () => {
    t = await createTestRuntime()
    const emitAt = async (ms: number, kind: any, payload: Record<string, unknown>, source?: string) => {
      t.clock.set(ms)
      await t.runtime.services.events.emit(kind, payload, source ? { source } : {})
    }
    await emitAt(T0, 'device.started', { softwareVersion: '1.0.0', buildHash: 'x', startedAt: T0 })
    await emitAt(T0 + 1000, 'login.locked', { accountName: '=HYPERLINK("x")', failures: 5, lockedUntil: T0 })
    await emitAt(T0 + 2000, 'alarm.raised', { taskId: 'task-1', alarmType: 'intrusion', cameraId: 'cam "1"', message: 'line1\nline2', imageUrl: null }, 'camera-7')
    await emitAt(T0 + 2 * HOUR, 'passengerFlow.counted', { taskId: 'pf-1', cameraId: null, in: 3, out: 1 })
    await emitAt(T0 + 2 * HOUR + 60_000, 'passengerFlow.counted', { taskId: 'pf-1', cameraId: null, in: 2, out: 2 })
    await emitAt(T0 + 26 * HOUR, 'passengerFlow.counted', { taskId: 'pf-1', cameraId: null, in: 7, out: 0 })
    await emitAt(T0 + 26 * HOUR, 'passengerFlow.counted', { taskId: 'pf-2', cameraId: null, in: 100, out: 100 })
  })
  afterAll(async () => {
    await t.close()
  })

  it('pages events newest first with kind, source and time filters', async () => {
    const all = await call(EventPage, { pageSize: 3 })
    expect(all.total).toBe(7)
    expect(all.rows).toHaveLength(3)
    expect(all.rows.map((r: any) => r.kind)).toEqual(['passengerFlow.counted', 'passengerFlow.counted', 'passengerFlow.counted'])
    const page3 = await call(EventPage, { pageSize: 3, pageNum: 3 })
    expect(page3.rows.map((r: any) => r.kind)).toEqual(['device.started'])
    expect(page3.rows[0]).toEqual({ id: expect.any(Number), kind: 'device.started', time: '2026-03-01T10:15:00.000Z', source: 'runtime', payload: { softwareVersion: '1.0.0', buildHash: 'x', startedAt: T0 }, thumbnailUrl: null, clipUrl: null })

    const byKind = await call(EventPage, { kinds: ['login.locked', 'alarm.raised'] })
    expect(byKind.rows.map((r: any) => r.kind)).toEqual(['alarm.raised', 'login.locked'])
    expect((await call(EventPage, { source: 'camera-7' })).rows.map((r: any) => r.payload.taskId)).toEqual(['task-1'])
    const window = await call(EventPage, { startTime: new Date(T0 + 1000).toISOString(), endTime: new Date(T0 + 2 * HOUR).toISOString() })
    expect(window.rows.map((r: any) => r.kind)).toEqual(['alarm.raised', 'login.locked'])
  })

  it('refuses bad filters with InvalidParam naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ kinds: ['no.such.kind'] }, '/kinds/0'],
      [{ startTime: 'yesterday' }, '/startTime'],
      [{ pageSize: 501 }, '/pageSize'],
      [{ pageNum: 0 }, '/pageNum'],
      [{ startTime: '2026-03-02T00:00:00Z', endTime: '2026-03-01T00:00:00Z' }, '/endTime'],
    ]
    for (const [input, field] of cases) {
      await expect(call(EventPage, input), JSON.stringify(input)).rejects.toMatchObject({ item: { messageKey: 'api.error.InvalidParam', details: { field } } })
    }
  })

  it('exports alarm events as streamed CSV, quoted and safe for spreadsheets', async () => {
    const response: Response = await call(ExportAlarms, { format: 'csv' })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="alarms-.*\.csv"$/)
    const lines = (await response.text()).split('\r\n')
    expect(lines[0]).toBe('id,time,kind,source,payload')
    // login.locked and alarm.raised are alarm kinds; device.started and passenger flow are not.
    expect(lines.filter(Boolean)).toHaveLength(3)
    expect(lines[1]).toMatch(/^\d+,2026-03-01T10:15:01\.000Z,login\.locked,login,"\{""accountName"":""=HYPERLINK\(\\""x\\""\)""/)
    expect(lines[2]).toContain(',alarm.raised,camera-7,"{""taskId"":""task-1""')
    const onlyLogin: Response = await call(ExportAlarms, { kinds: ['login.locked', 'device.started'], format: 'csv' })
    expect((await onlyLogin.text()).trim().split('\r\n')).toHaveLength(2)
  })

  it('sums passenger flow per period', async () => {
    const range = { startTime: '2026-03-01T00:00:00Z', endTime: '2026-03-03T00:00:00Z' }
    const byDay = await call(PassengerFlowStatistics, { ...range, period: 'day' })
    expect(byDay.rows).toEqual([
      { periodStart: '2026-03-01T00:00:00Z', in: 5, out: 3, total: 8, events: 2 },
      { periodStart: '2026-03-02T00:00:00Z', in: 107, out: 100, total: 207, events: 2 },
    ])
    expect(byDay.total).toEqual({ in: 112, out: 103 })
    const byHour = await call(PassengerFlowStatistics, { ...range, period: 'hour', taskId: 'pf-1' })
    expect(byHour.rows.map((r: any) => [r.periodStart, r.in, r.out])).toEqual([['2026-03-01T12:00:00Z', 5, 3], ['2026-03-02T12:00:00Z', 7, 0]])
    const byMonth = await call(PassengerFlowStatistics, { ...range, period: 'month' })
    expect(byMonth.rows).toEqual([{ periodStart: '2026-03-01T00:00:00Z', in: 112, out: 103, total: 215, events: 4 }])
    await expect(call(PassengerFlowStatistics, { ...range, period: 'week' })).rejects.toMatchObject({ item: { details: { field: '/period' } } })
  })
})
