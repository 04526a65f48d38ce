/**
 * The live wall and the Cameras list (docs/console-and-cli.md "Live wall", "Cameras"), in real
 * Chromium against the real device, GStreamer's RTSP server on loopback and a real
 * person-detection task: every camera has a tile; a tile past the per-camera viewer bound says
 * so and opens once a viewer leaves; tiles resize and go full screen; the boxes drawn over a
 * frame are the task's result of that frame (measured against footage whose person position is
 * known in every frame); the Cameras list shows each camera's recent picture and last event.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, onTestFailed, onTestFinished } from 'vitest'
import type { Locator } from 'playwright-core'
import { browserTest as test, openConsole, plays, signIn } from '../helpers/browser.ts'
import { addRtspCamera } from '../helpers/cameras.ts'
import { freePort, type DeviceProcess } from '../helpers/device.ts'
import { startRtspServer, type RtspServer } from '../helpers/rtsp-server.ts'
import { until } from '../helpers/processes.ts'
import { PERSON_VIDEO } from '../helpers/video.ts'
import { makeWallFootage, WALL_FOOTAGE as F } from './wall-footage.ts'

/** Pixels the footage's person moves from one frame to the next. */
const STEP = F.speed / F.fps
/** Where the marker's centre is when he turns: his leftmost and rightmost places (wall-footage.ts, his picture 380 of 1024 px wide). */
const TURNS = [F.left + (F.personHeight * 380 / 1024) / 2, F.left + F.speed * 5 + (F.personHeight * 380 / 1024) / 2] as const

// Sessions of a closed page end soon (they are not stopped by a page that goes away).
test.override('deviceOptions', { env: { LIVE_MAX_VIEWERS_PER_CAMERA: '1', LIVE_IDLE_TIMEOUT_MS: '4000' } })

let dir: string
let rtsp: RtspServer
let device: DeviceProcess
let mtk: string
let walker: string
let office: string
const post = async (route: string, body: unknown) => {
  const answer = (await device.post(route, body, mtk)).body
  expect(answer.resMsg, route).toEqual([])
  return answer.resData
}

test.beforeAll(async ({ device: started, mtk: session }) => {
  device = started
  mtk = session
  dir = mkdtempSync(path.join(tmpdir(), 'wall-test-'))
  const footage = await makeWallFootage(dir)
  rtsp = await startRtspServer(PERSON_VIDEO, await freePort(), [{ path: '/walker', file: footage }, { path: '/office' }])
  walker = await addRtspCamera(device, mtk, rtsp.urls[0]!, 'walker')
  office = await addRtspCamera(device, mtk, rtsp.urls[1]!, 'office')
  await post('/v1/cwai/aihost/TaskCreate', { taskId: 'walker-people', algorithmCode: 'person-detector', cameraId: walker, targetFps: F.fps, motionGating: false })
})
/** What a failure report needs: the cameras' state, the RTSP server's pipelines, the device's warnings. */
async function diagnosis(): Promise<string> {
  const rows = (await device.post('/gtw/cwai/Camera/page', { pageNum: 1, pageSize: 10 }, mtk)).body.resData?.rows ?? []
  return [
    `cameras: ${JSON.stringify(rows.map((c: any) => [c.cameraName, c.status, c.lastError]))}`,
    `RTSP pipelines: ${JSON.stringify(rtsp.media.map((m) => ({ mount: m.mount, id: m.id, startedAt: m.startedAt, loops: m.loops.length })))}`,
    `device warnings: ${device.logs.filter((l) => Number(l.level) >= 40).slice(-15).map((l) => JSON.stringify(l)).join('\n')}`,
  ].join('\n')
}

test.beforeEach(() => {
  onTestFailed(async () => console.error(`wall: ${await diagnosis()}`))
})

test.afterAll(async () => {
  await rtsp?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/**
 * Every frame the walker's tile presents for 16 s (more than one 10 s loop of the footage): the
 * person's position read from the frame's own pixels (the magenta bar) against the boxes the
 * overlay drew on it, as offsets in frames of his walk; and the clock estimate's (the fallback's)
 * on the same frames as the baseline.
 */
async function boxesAgainstPerson(tile: Locator) {
  const samples = await tile.evaluate((element, f) => new Promise<{ mediaTime: number; marker: number | null; drawnFor: string; match: string; newest: number; drawn: { x: number; width: number }[]; estimated: { x: number; width: number }[] }[]>((resolve) => {
    const video = element.querySelector('video')! as HTMLVideoElement & { requestVideoFrameCallback(cb: (now: number, meta: { mediaTime: number }) => void): number }
    const overlay = element.querySelector<HTMLCanvasElement>('[data-testid="live-overlay"]')!
    const canvas = document.createElement('canvas')
    canvas.width = f.width
    canvas.height = f.height
    const context2d = canvas.getContext('2d', { willReadFrequently: true })!
    const out: { mediaTime: number; marker: number | null; drawnFor: string; match: string; newest: number; drawn: { x: number; width: number }[]; estimated: { x: number; width: number }[] }[] = []
    const started = performance.now()
    const onFrame = (_now: number, meta: { mediaTime: number }) => {
      context2d.drawImage(video, 0, 0, f.width, f.height)
      const row = context2d.getImageData(0, f.markerTop + Math.floor(f.markerHeight / 2), f.width, 1).data
      let first = -1
      let last = -1
      for (let x = 0; x < f.width; x++) {
        const [r, g, b] = [row[x * 4]!, row[x * 4 + 1]!, row[x * 4 + 2]!]
        if (r > 170 && g < 110 && b > 170) {
          if (first < 0) first = x
          last = x
        }
      }
      // The page's own callback for this frame has run once this task runs.
      setTimeout(() => {
        out.push({ mediaTime: meta.mediaTime, marker: first < 0 ? null : (first + last) / 2, drawnFor: overlay.dataset.mediaTime ?? '', match: overlay.dataset.match ?? '', newest: Number(overlay.dataset.newestResult), drawn: JSON.parse(overlay.dataset.drawn ?? '[]'), estimated: JSON.parse(overlay.dataset.estimated ?? '[]') })
      }, 0)
      if (performance.now() - started < 16_000) video.requestVideoFrameCallback(onFrame)
      else setTimeout(() => resolve(out), 50)
    }
    video.requestVideoFrameCallback(onFrame)
  }), F)
  const inside = (m: number) => m > TURNS[0] + STEP && m < TURNS[1] - STEP
  // Samples of a frame the overlay drew for, with the person away from the turns, and the way he walks.
  const measured: { error: number; way: number; match: string; late: boolean; marker: number }[] = []
  // The baseline, on the same frames: the box the clock estimate (the former way, now the fallback) would have drawn.
  const estimated: { error: number; way: number }[] = []
  for (let i = 1; i < samples.length; i++) {
    const [before, s] = [samples[i - 1]!, samples[i]!]
    if (s.drawnFor !== String(s.mediaTime) || s.marker === null || before.marker === null || !inside(s.marker)) continue
    if (s.mediaTime - before.mediaTime > 1.5 / F.fps || s.drawn.length === 0) continue
    if (s.estimated.length > 0) {
      const guess = s.estimated.map((b) => b.x + b.width / 2).reduce((a, b) => (Math.abs(b - s.marker!) < Math.abs(a - s.marker!) ? b : a))
      estimated.push({ error: guess - s.marker, way: Math.sign(s.marker - before.marker) })
    }
    const centres = s.drawn.map((b) => b.x + b.width / 2)
    const nearest = centres.reduce((a, b) => (Math.abs(b - s.marker!) < Math.abs(a - s.marker!) ? b : a))
    measured.push({ error: nearest - s.marker, way: Math.sign(s.marker - before.marker), match: s.match, late: s.newest < s.mediaTime - 0.5 / F.fps, marker: s.marker })
  }
  const right = measured.filter((m) => m.way > 0).map((m) => m.error)
  const left = measured.filter((m) => m.way < 0).map((m) => m.error)
  // A box that lags k frames is k·STEP behind the person: left of him walking right, right of him
  // walking left; the box's own offset inside the picture (where he stands in it) is the same both ways.
  const bias = (median(right) + median(left)) / 2
  const lagFrames = (median(left) - median(right)) / 2 / STEP
  const offsets = measured.map((m) => Math.abs(m.error - bias) / STEP)
  const summary = {
    frames: samples.length, measured: measured.length, walkingRight: right.length, walkingLeft: left.length,
    ownResult: measured.filter((m) => m.match === 'frame').length, held: measured.filter((m) => m.match === 'held').length,
    heldAsLate: measured.filter((m) => m.match === 'held' && m.late).length,
    lagFrames: Number(lagFrames.toFixed(2)), medianOffsetFrames: Number(median(offsets).toFixed(2)), maxOffsetFrames: Number(Math.max(...offsets).toFixed(2)), biasPx: Number(bias.toFixed(1)),
  }
  const baselineOffsets = estimated.map((m) => Math.abs(m.error - bias) / STEP)
  const baseline = {
    measured: estimated.length,
    lagFrames: Number(((median(estimated.filter((m) => m.way < 0).map((m) => m.error)) - median(estimated.filter((m) => m.way > 0).map((m) => m.error))) / 2 / STEP).toFixed(2)),
    medianOffsetFrames: Number(median(baselineOffsets).toFixed(2)), maxOffsetFrames: Number(Math.max(...baselineOffsets).toFixed(2)),
  }
  return { summary, baseline, measured, offsets, right, left, lagFrames }
}

test.describe('console: live wall', () => {
  test('every camera has a tile; past the viewer bound a tile says so, then opens; tiles resize and go full screen', { timeout: 240_000 }, async ({ browser }) => {
    // Another viewer holds the office camera's only live view.
    const other = await post('/gtw/cwai/LiveStream/request', { cameraId: office })
    const holding = setInterval(() => void device.post('/gtw/cwai/LiveStream/keepAlive', { sessionId: other.sessionId }, mtk), 1000)
    onTestFinished(() => clearInterval(holding))
    const { page, pageErrors, foreignRequests, screenshot, context } = await openConsole(browser, device.url, 1280)
    onTestFinished(() => context.close())
    await signIn(page, device.url, '#/live')
    await page.getByRole('heading', { name: 'Live wall', level: 1 }).waitFor()
    const tiles = page.getByTestId('live-tile')
    await until(async () => await tiles.count() === 2, 'the wall\'s tiles')
    await expect(tiles.evaluateAll((all) => all.map((t) => t.getAttribute('data-camera')).sort())).resolves.toEqual([walker, office].sort())
    const officeTile = page.locator(`[data-testid="live-tile"][data-camera="${office}"]`)
    const walkerTile = page.locator(`[data-testid="live-tile"][data-camera="${walker}"]`)
    await expect(officeTile.getByTestId('tile-limit').textContent()).resolves.toBe('office already has 1 live viewer, the most the device allows per camera (LIVE_MAX_VIEWERS_PER_CAMERA). Close another view of it (another tab or user); this tile tries again every 10 s.')
    await plays(page, 'live-video')
    await screenshot('wall-limit')

    // The other viewer leaves: the tile opens at its next try.
    clearInterval(holding)
    await post('/gtw/cwai/LiveStream/stop', { sessionId: other.sessionId })
    await officeTile.getByTestId('live-video').waitFor({ timeout: 30_000 })
    await expect(officeTile.getByTestId('tile-limit').count()).resolves.toBe(0)
    for (const id of [walker, office]) {
      await until(async () => {
        const t = () => page.locator(`[data-testid="live-tile"][data-camera="${id}"] video`).evaluate((v: HTMLVideoElement) => v.currentTime)
        const before = await t()
        await new Promise((resolve) => setTimeout(resolve, 1200))
        return await t() > before + 0.5
      }, `the tile of ${id} to play`, 60_000)
    }

    // Resize: the larger size is wider, the smaller narrower.
    const width = () => walkerTile.evaluate((t) => t.getBoundingClientRect().width)
    const start = await width()
    await walkerTile.getByRole('button', { name: 'Larger tile for walker' }).click()
    const larger = await width()
    expect(larger).toBeGreaterThan(start + 100)
    await walkerTile.getByRole('button', { name: 'Smaller tile for walker' }).click()
    await walkerTile.getByRole('button', { name: 'Smaller tile for walker' }).click()
    expect(await width()).toBeLessThan(start - 100)

    // Full screen: the tile fills the screen, its picture nearly so; and back.
    await walkerTile.getByRole('button', { name: 'Full screen: walker' }).click()
    await page.waitForFunction((id) => (document.fullscreenElement as HTMLElement | null)?.dataset.camera === id, walker)
    const shown = await walkerTile.evaluate((t) => ({ tile: t.getBoundingClientRect().width, video: t.querySelector('video')!.getBoundingClientRect().width, screen: window.innerWidth }))
    expect(shown.tile).toBe(shown.screen)
    expect(shown.video).toBeGreaterThan(shown.screen * 0.9)
    await screenshot('wall-fullscreen')
    await walkerTile.getByRole('button', { name: 'Leave full screen: walker' }).click()
    await page.waitForFunction(() => document.fullscreenElement === null)
    expect(pageErrors.filter((e) => !/429|Too Many Requests/.test(e))).toEqual([])
    expect(foreignRequests).toEqual([])
    await context.close()
  })

  test('the boxes drawn over a frame are the task\'s result of that frame: offset from the person at most 1 frame', { timeout: 240_000 }, async ({ browser }) => {
    const { page, pageErrors, screenshot, context } = await openConsole(browser, device.url, 1280)
    onTestFinished(() => context.close())
    await signIn(page, device.url, '#/live')
    const tile = page.locator(`[data-testid="live-tile"][data-camera="${walker}"]`)
    await tile.getByTestId('live-video').waitFor()
    // Until the task's boxes are drawn on the frames they belong to.
    await page.waitForFunction((id) => document.querySelector<HTMLCanvasElement>(`[data-camera="${id}"] [data-testid="live-overlay"]`)?.dataset.match === 'frame', walker, { timeout: 120_000 })
    const { summary, baseline, measured, offsets, right, left, lagFrames } = await boxesAgainstPerson(tile)
    await screenshot('wall-boxes')
    console.log('live wall boxes against the person', summary, 'baseline (clock estimate, same frames)', baseline)
    expect(right.length).toBeGreaterThanOrEqual(10)
    expect(left.length).toBeGreaterThanOrEqual(10)
    // Most frames are drawn with their own result: the task analyses every frame of the camera's
    // unless its detector falls behind, when it drops frames (counted) and the wall holds the
    // previous result for them (measured below like the others).
    expect(summary.ownResult).toBeGreaterThanOrEqual(measured.length * 0.5)
    // No lag, and no frame more than one frame off: its own result well within half a frame
    // (the detector's box wobbles by a few pixels), the task's previous one at one.
    expect(Math.abs(lagFrames)).toBeLessThanOrEqual(0.5)
    for (const [i, m] of measured.entries()) {
      if (m.match === 'frame') expect(offsets[i]).toBeLessThanOrEqual(0.5)
      expect(Math.round(offsets[i]!)).toBeLessThanOrEqual(1)
    }
    // The previous test's page left its sessions to their idle timeout: a first request may meet the bound (429) and retry.
    expect(pageErrors.filter((e) => !/429|Too Many Requests/.test(e))).toEqual([])
    await context.close()
  })

  test('a task analysing every other frame: the boxes held over the frames between move with the person, not a frame behind him', { timeout: 240_000 }, async ({ browser }) => {
    await post('/gtw/cwai/Task/update', { taskId: 'walker-people', targetFps: F.fps / 2 })
    onTestFinished(async () => { await post('/gtw/cwai/Task/update', { taskId: 'walker-people', targetFps: F.fps }) })
    const { page, pageErrors, context } = await openConsole(browser, device.url, 1280)
    onTestFinished(() => context.close())
    await signIn(page, device.url, '#/live')
    const tile = page.locator(`[data-testid="live-tile"][data-camera="${walker}"]`)
    await tile.getByTestId('live-video').waitFor()
    await page.waitForFunction((id) => document.querySelector<HTMLCanvasElement>(`[data-camera="${id}"] [data-testid="live-overlay"]`)?.dataset.match === 'held', walker, { timeout: 120_000 })
    const { summary, measured, offsets } = await boxesAgainstPerson(tile)
    console.log('live wall boxes against the person, the task at half the camera\'s rate', summary)
    // About every other frame is held over; unmoved, its box would be one frame (STEP px) behind him.
    // He turns at once at each end: a result of the frame of the turn, held over the next, is carried
    // one step on the way he came (two frames off); away from the ends every held box is on him.
    const walking = (i: number) => TURNS.every((turn) => Math.abs(measured[i]!.marker - turn) > 2.5 * STEP)
    const held = offsets.filter((_, i) => measured[i]!.match === 'held' && walking(i))
    expect(held.length).toBeGreaterThanOrEqual(10)
    expect(median(held)).toBeLessThanOrEqual(0.35)
    for (const [i, offset] of offsets.entries()) expect(Math.round(offset)).toBeLessThanOrEqual(walking(i) ? 1 : 2)
    expect(pageErrors.filter((e) => !/429|Too Many Requests/.test(e))).toEqual([])
  })

  test('the Cameras list shows each camera\'s recent picture and its last event', { timeout: 180_000 }, async ({ browser }) => {
    // The walker's task has seen him by now; the office camera has no task.
    const newest = async () => (await post('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 1, cameraId: walker, kinds: ['object.entered', 'object.recognized', 'alarm.raised'] })).rows[0]
    const entered = await until(newest, 'the walker\'s object.entered', 60_000)
    expect(entered).toMatchObject({ kind: 'object.entered', payload: { cameraId: walker, label: 'person' } })
    const { page, pageErrors, screenshot, context } = await openConsole(browser, device.url, 1280)
    await signIn(page, device.url, '#/cameras')
    await page.getByRole('heading', { name: 'Cameras', level: 1 }).waitFor()
    const row = (id: string) => page.locator(`tr[data-camera-id="${id}"]`)
    for (const id of [walker, office]) {
      // A decoded picture of the camera's size ratio.
      await page.waitForFunction((cameraId) => {
        const img = document.querySelector<HTMLImageElement>(`tr[data-camera-id="${cameraId}"] [data-testid="camera-thumbnail"]`)
        return !!img && img.complete && img.naturalWidth > 0
      }, id, { timeout: 60_000 })
      const size = await row(id).getByTestId('camera-thumbnail').evaluate((img: HTMLImageElement) => img.naturalWidth / img.naturalHeight)
      expect(size).toBeCloseTo(F.width / F.height, 1)
    }
    const shown = row(walker).getByTestId('camera-last-event')
    await expect(shown.getByTestId('last-event-label').textContent()).resolves.toBe('person entered')
    const latest = await newest()
    await expect(shown.getByTestId('last-event-time').getAttribute('datetime')).resolves.toBe(latest.time)
    await expect(shown.getByTestId('last-event-time').textContent()).resolves.toBe(await page.evaluate((t) => new Date(Date.parse(t)).toLocaleString(), latest.time as string))
    await expect(row(office).getByTestId('camera-last-event').textContent()).resolves.toBe('None yet')
    await screenshot('cameras-thumbnails')
    expect(pageErrors).toEqual([])
    await context.close()
  })
})
