import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { freePort } from './device.ts'
import { deviceTest } from './device-fixture.ts'
import { spliceVideo } from './media.ts'
import { startRtspServer, type RtspServer } from './rtsp-server.ts'
import { PERSON_VIDEO } from './video.ts'

/**
 * One visit at a time, at a known place: the third visit of the footage (the person walks in
 * just after 49 s of the source and is out of the picture at 70 s), after 12 s of the empty
 * room (45–49 s, three times) and before 8 s of it (70–72 s, four times), so the person walks
 * in at about 12 s of every 41 s; five times over (205 s).
 */
export const VISIT_PIECES: [number, number][] = [[45, 49], [45, 49], [45, 49], [49, 70], [70, 72], [70, 72], [70, 72], [70, 72]]
export const VISIT_LOOPS = 5

export interface VisitFootage {
  /** The RTSP server on loopback playing it. */
  rtsp: RtspServer
  /** The file's scratch folder (removed after its last test). */
  dir: string
}

/**
 * The device fixture (device-fixture.ts) with a camera's worth of that footage: `visitFootage`
 * starts the RTSP server once per file, on a free port, and stops it after the file.
 */
// eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from this pattern
export const visitFootageTest = deviceTest.extend('visitFootage', { scope: 'file' }, async ({}, { onCleanup }): Promise<VisitFootage> => {
  const dir = mkdtempSync(path.join(tmpdir(), 'visit-footage-'))
  const source = path.join(dir, 'visit.mp4')
  spliceVideo(PERSON_VIDEO, VISIT_PIECES, source, VISIT_LOOPS)
  const rtsp = await startRtspServer(source, await freePort())
  onCleanup(async () => {
    await rtsp.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  return { rtsp, dir }
})
