import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { startDevice, type DeviceProcess } from '../../test/helpers/device.ts'
import { faketimeEnv, hasFaketime, LIBFAKETIME, step } from '../../test/helpers/faketime.ts'
import { chunkedUpload } from '../../test/helpers/upload-file.ts'
import { ROOT, envelopeViolation, sleep } from './lib.ts'

/**
 * Wall-clock steps on the running device (docs/system.md "Clocks"): a supervised device under
 * libfaketime has its wall clock stepped 3 h forward, and another one 3 h back, with an upload
 * half sent, an mtk and a factory-reset token in flight. Forward: the next chunk (sent within a
 * second) completes the same upload, the mtk works, the token confirms the reset. Back: the
 * same, and an idle upload and the token end at their real age. The vitest test
 * test/reliability/clock-step.e2e.test.ts adds a live-view token.
 */
export interface ClockFigures {
  cases: { offset: string; deviceOffsetMs: number; nextChunkMs: number; outcome: string }[]
  violations: string[]
  skipped: string[]
  durationMs: number
}

const HOUR = 3_600_000
const TTL_MS = 6000
const FACE = path.join(ROOT, '../shared/media/faces/person-celeste.jpg')

export async function runClockSteps(options: { log: (line: string) => void }): Promise<ClockFigures> {
  const started = performance.now()
  const figures: ClockFigures = { cases: [], violations: [], skipped: [], durationMs: 0 }
  if (!hasFaketime()) {
    figures.skipped.push(`wall-clock steps: ${LIBFAKETIME} missing (Debian package faketime, test/provision.mjs)`)
    return figures
  }
  for (const offset of ['+3h', '-3h']) {
    const violations = await stepCase(offset, figures)
    figures.violations.push(...violations.map((v) => `${offset}: ${v}`))
    options.log(`clock ${offset}: ${violations.length ? violations.join('; ') : 'nothing in flight ended'}`)
  }
  figures.durationMs = Math.round(performance.now() - started)
  return figures
}

async function stepCase(offset: string, figures: ClockFigures): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'reliability-clock-'))
  const offsetFile = path.join(dir, 'faketime')
  const violations: string[] = []
  let device: DeviceProcess | null = null
  try {
    device = await startDevice({
      entry: 'supervisor',
      env: { ...faketimeEnv(offsetFile), FACTORY_RESET_TOKEN_TTL_MS: String(TTL_MS), UPLOAD_IDLE_TIMEOUT_MS: String(TTL_MS), UPLOAD_SWEEP_INTERVAL_MS: '500' },
    })
    const on = device
    const mtk = await on.adminToken()
    const post = async (route: string, body: unknown = {}) => {
      const answer = await on.post(route, body, mtk)
      const problem = envelopeViolation({ ...answer, contentType: '' })
      if (problem) violations.push(`${route}: ${problem}`)
      return answer.body
    }
    const expect = (what: string, ok: boolean, answer: unknown) => { if (!ok) violations.push(`${what}: ${JSON.stringify(answer).slice(0, 300)}`) }
    const face = readFileSync(FACE)
    const idle = chunkedUpload(on, mtk, face)
    const upload = chunkedUpload(on, mtk, face)
    expect('idle upload chunk 0', (await idle.send(0)).resCode === 1, null)
    const first = await upload.send(0)
    expect('upload chunk 0', first.resCode === 1, first)
    const reset = await post('/gtw/cwai/System/RequestFactoryReset')
    const issued = performance.now()

    step(offsetFile, offset)
    const stepped = performance.now()
    const probe = (await on.post('/v1/cwai/aihost/Probe')).body
    const deviceOffsetMs = Math.round(Number(probe.resData?.timestamp) - Date.now())
    const want = (offset.startsWith('+') ? 3 : -3) * HOUR
    expect('device clock stepped', Math.abs(deviceOffsetMs - want) < 5000, { deviceOffsetMs })
    const next = await upload.send(1)
    const nextChunkMs = Math.round(performance.now() - stepped)
    expect('next chunk accepted within a second of the step', next.resCode === 1 && next.resData?.uploadId === upload.uploadId && nextChunkMs < 1000, { nextChunkMs, next })
    const last = await upload.send(2)
    expect('upload completes with the same uploadId', last.resCode === 1 && last.resData?.complete === true && last.resData?.uploadId === upload.uploadId, last)
    const page = await post('/gtw/cwai/Camera/page', {})
    expect('mtk works', page.resCode === 1, page)
    let outcome: string
    if (offset.startsWith('+')) {
      const confirmed = await post('/gtw/cwai/System/FactoryReset', { confirmationToken: reset.resData?.confirmationToken })
      expect('factory-reset token issued before the step confirms', confirmed.resData?.resetting === true, confirmed)
      outcome = 'upload completed, mtk kept, reset token confirmed'
    } else {
      await sleep(Math.max(0, issued + TTL_MS + 1500 - performance.now()))
      const late = await post('/gtw/cwai/System/FactoryReset', { confirmationToken: reset.resData?.confirmationToken })
      expect('factory-reset token past its real TTL is expired', late.resMsg?.[0]?.messageKey === 'api.error.FactoryResetTokenExpired', late)
      const dead = await idle.send(1)
      expect('upload idle past its real timeout is expired', dead.resMsg?.[0]?.messageKey === 'api.error.uploadExpired', dead)
      outcome = 'upload completed, mtk kept, reset token and idle upload expired at their real age'
    }
    figures.cases.push({ offset, deviceOffsetMs, nextChunkMs, outcome: violations.length ? 'violations' : outcome })
  } catch (error) {
    violations.push(`aborted: ${(error as Error).message}`)
  } finally {
    await device?.stop()
    device?.cleanup()
    rmSync(dir, { recursive: true, force: true })
  }
  return violations
}
