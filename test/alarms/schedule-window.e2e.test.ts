import { expect } from 'vitest'
import { footageApi, type FootageApi } from '../helpers/cameras.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { until } from '../helpers/processes.ts'
import { PERSON_VIDEO } from '../helpers/video.ts'

/**
 * The schedules' clock starts 90 s before summer time begins in Berlin (2026-03-29, 02:00 CET
 * → 03:00 CEST at 01:00Z) and runs RATE times faster than real time. A window from 02:00:00 to
 * 02:01:00 lies in the hour the clocks skip: it runs once, 03:00:00–03:01:00 summer time.
 */
const CLOCK_START = '2026-03-29T00:58:30Z'
const RATE = 4
const WINDOW_ON = Date.parse('2026-03-29T01:00:00Z')
const WINDOW_OFF = Date.parse('2026-03-29T01:01:00Z')
/** "Within a few frames" on the schedules' clock: 3 s of real time, six frames at the task's 2 fps. */
const SLACK_MS = 3_000 * RATE

test.override('deviceOptions', { env: { SCHEDULE_CLOCK_START: CLOCK_START, SCHEDULE_CLOCK_RATE: String(RATE) } })

test.describe('a schedule on a camera with the real runtime, sidecar and ffmpeg (spec 4.10)', () => {
  let api: FootageApi
  const ok = (route: string, body: unknown) => api.ok(route, body)
  const status = (taskId: string) => api.status(taskId)

  test.beforeAll(async ({ device, mtk }) => {
    api = footageApi(device, mtk, PERSON_VIDEO)
    await ok('/gtw/cwai/System/SetTimeParam', { timeZone: 'Europe/Berlin' })
  })
  test.afterAll(() => api?.stopCameras())

  test('a schedule window turns analysis on and off at its boundaries, on the night summer time begins (injected clock, four times real speed)', { timeout: 300_000 }, async () => {
    const { scheduleId } = await ok('/gtw/cwai/schedule/add', { scheduleName: 'dst-night', windows: [{ day: 'sun', start: '02:00:00', end: '02:01:00' }] })
    const clock = async () => Number((await ok('/gtw/cwai/schedule/query', { scheduleId })).now)
    const schedule = await ok('/gtw/cwai/schedule/query', { scheduleId })
    expect(schedule).toMatchObject({ active: false, nextChange: String(WINDOW_ON), nextChangeLocal: '2026-03-29T03:00:00.000+02:00', timeZone: 'Europe/Berlin' })
    const cameraId = await api.addCamera('night')
    expect(Number((await ok('/gtw/cwai/schedule/query', { scheduleId })).now), 'the set-up took longer than the clock\'s lead on the window').toBeLessThan(WINDOW_ON - SLACK_MS)
    await ok('/v1/cwai/aihost/TaskCreate', { taskId: 'night', algorithmCode: 'person-detector', cameraId, targetFps: 2, motionGating: false, scheduleId })

    const idle = await until(async () => { const s = await status('night'); return s.state === 'idle' && s.scheduleSkipped > 0 && s }, 'the task to idle outside its window', 60_000)
    expect(idle.stateReason).toBe('outsideSchedule: "dst-night" until 2026-03-29T03:00:00.000+02:00')
    expect(idle.detectorLatencyP50Ms).toBeNull()

    /** Polls the task until `state`, with the schedules' clock read before and after each look. */
    const watch = async (state: string, timeoutMs: number) => {
      const seen: { before: number; after: number; status: any }[] = []
      await until(async () => {
        const before = await clock()
        const s = await status('night')
        seen.push({ before, after: await clock(), status: s })
        return s.state === state
      }, `the task to be ${state}`, timeoutMs)
      return seen
    }
    const on = await watch('running', 60_000)
    // Never analysing before the window; analysing within a few frames of it.
    for (const look of on.slice(0, -1)) expect(look.status.state, JSON.stringify(look)).toBe('idle')
    const firstOn = on[on.length - 1]!
    expect(firstOn.after).toBeGreaterThanOrEqual(WINDOW_ON)
    expect(firstOn.before).toBeLessThan(WINDOW_ON + SLACK_MS)
    const skippedBefore = firstOn.status.scheduleSkipped
    await until(async () => (await status('night')).detectorLatencyP50Ms !== null, 'a detection in the window')

    const off = await watch('idle', 60_000)
    for (const look of off.slice(0, -1)) expect(look.status.state, JSON.stringify(look)).toBe('running')
    const firstOff = off[off.length - 1]!
    expect(firstOff.after).toBeGreaterThanOrEqual(WINDOW_OFF)
    expect(firstOff.before).toBeLessThan(WINDOW_OFF + SLACK_MS)
    // The next window is a week later, in summer time.
    expect(firstOff.status.stateReason).toBe('outsideSchedule: "dst-night" until 2026-04-05T02:00:00.000+02:00')
    await until(async () => (await status('night')).scheduleSkipped > skippedBefore, 'frames skipped again')
  })

  test('a schedule in use is not deleted; the refusal names its task', async () => {
    const { rows } = await ok('/gtw/cwai/schedule/page', { scheduleName: 'dst-night' })
    const scheduleId = rows[0].scheduleId
    const refused = await api.post('/gtw/cwai/schedule/delete', { scheduleId })
    expect(refused.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.ScheduleInUse', details: { scheduleId, taskIds: ['night'], policies: [] } })
    expect(refused.body.resMsg[0].msgText).toContain('stream task night')
    await ok('/v1/cwai/aihost/TaskCancle', { taskId: 'night' })
    await ok('/gtw/cwai/schedule/delete', { scheduleId })
    const [camera] = (await ok('/gtw/cwai/Camera/page', { cameraName: 'night' })).rows
    await ok('/gtw/cwai/Camera/delete', { cameraId: camera.cameraId })
    await api.stopCameras()
  })
})
