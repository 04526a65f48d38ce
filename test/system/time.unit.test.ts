/**
 * The device time zone as other areas read it (schedules: `ctx.time.timeZone()` and its change
 * listener), the NTP writers against a temporary root with a scripted command runner, and the
 * SNTP drift measurement against a server on loopback.
 */
import { createSocket } from 'node:dgram'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import SetTimeParam from '../../functions/system/SetTimeParam.ts'
import { createTestRuntime } from '../helpers/test-ctx.ts'
import { localIso, utcOffsetMinutes, zonedParts } from '../../shared/system/time-zone.ts'
import { detectTimeService, writeNtpServers, type CommandRunner } from '../../runtime/system/time-backends.ts'
import { sntpQuery, writeTimestamp } from '../../runtime/system/sntp.ts'

const roots: string[] = []
afterAll(() => { for (const root of roots) rmSync(root, { recursive: true, force: true }) })
const tempRoot = () => { const root = mkdtempSync(path.join(tmpdir(), 'time-root-')); roots.push(root); return root }

describe('device time zone', () => {
  it('changes what ctx.time.timeZone() answers and tells its listeners', async () => {
    const t = await createTestRuntime({ timeService: 'none' })
    try {
      const ctx = t.ctx()
      const heard: string[] = []
      const stop = ctx.time.onTimeZoneChange((zone) => heard.push(zone))
      await SetTimeParam.handle({ timeZone: 'America/New_York' }, ctx)
      expect(ctx.time.timeZone()).toBe('America/New_York')
      await SetTimeParam.handle({ timeZone: 'America/New_York' }, ctx) // unchanged: no call
      await SetTimeParam.handle({ timeZone: 'Australia/Lord_Howe' }, ctx)
      stop()
      await SetTimeParam.handle({ timeZone: 'Europe/Berlin' }, ctx)
      expect(heard).toEqual(['America/New_York', 'Australia/Lord_Howe'])
      await expect(SetTimeParam.handle({ timeZone: 'Europe/Atlantis' }, ctx)).rejects.toMatchObject({ id: 'TimeZoneUnknown' })
      expect(ctx.time.timeZone()).toBe('Europe/Berlin')
    } finally {
      await t.close()
    }
  })

  it('gives local wall-clock time across a daylight-saving change', () => {
    // 2026-03-29 01:00 UTC: Berlin springs from 02:00 CET to 03:00 CEST.
    const before = Date.UTC(2026, 2, 29, 0, 59, 0), after = Date.UTC(2026, 2, 29, 1, 0, 0)
    expect(zonedParts(before, 'Europe/Berlin')).toEqual({ year: 2026, month: 3, day: 29, hour: 1, minute: 59, second: 0, weekday: 0 })
    expect(zonedParts(after, 'Europe/Berlin').hour).toBe(3)
    expect([utcOffsetMinutes(before, 'Europe/Berlin'), utcOffsetMinutes(after, 'Europe/Berlin')]).toEqual([60, 120])
    expect(localIso(after, 'Europe/Berlin')).toBe('2026-03-29T03:00:00.000+02:00')
    expect(localIso(after, 'America/St_Johns')).toBe('2026-03-28T22:30:00.000-02:30')
  })
})

describe('NTP servers written to the time service', () => {
  const runner = (answers: Record<string, { code: number; stderr?: string; stdout?: string }>) => {
    const calls: string[] = []
    const run: CommandRunner = async (command, args) => {
      const line = [command, ...args].join(' ')
      calls.push(line)
      const answer = answers[line] ?? { code: 0 }
      return { code: answer.code, stdout: answer.stdout ?? '', stderr: answer.stderr ?? '' }
    }
    return { run, calls }
  }

  it('detects the running service and refuses clearly when none runs', async () => {
    const none = runner({ 'systemctl is-active chrony': { code: 3, stdout: 'inactive\n' }, 'systemctl is-active chronyd': { code: 3, stdout: 'inactive\n' }, 'systemctl is-active systemd-timesyncd': { code: 3, stdout: 'inactive\n' } })
    expect(await detectTimeService('', none.run)).toEqual({ type: null, reason: 'neither chrony nor systemd-timesyncd runs on this host (systemctl is-active)' })
    const timesyncd = runner({ 'systemctl is-active chrony': { code: 4 }, 'systemctl is-active chronyd': { code: 4 }, 'systemctl is-active systemd-timesyncd': { code: 0, stdout: 'active\n' } })
    expect(await detectTimeService('', timesyncd.run)).toEqual({ type: 'systemd-timesyncd', reason: null })
    expect((await detectTimeService('ntpd', none.run)).type).toBeNull()
  })

  it('writes a timesyncd drop-in and restarts the service; an empty list removes it', async () => {
    const root = tempRoot()
    const { run, calls } = runner({})
    await writeNtpServers('systemd-timesyncd', ['ntp1.example.org', '192.0.2.10'], { root, run })
    const file = path.join(root, 'etc/systemd/timesyncd.conf.d/50-cwai.conf')
    expect(readFileSync(file, 'utf8')).toMatch(/\[Time\]\nNTP=ntp1\.example\.org 192\.0\.2\.10\n$/)
    expect(calls).toEqual(['systemctl restart systemd-timesyncd'])
    await writeNtpServers('systemd-timesyncd', [], { root, run })
    expect(existsSync(file)).toBe(false)
  })

  it('writes chrony sources, and restores the previous file when chrony does not take them', async () => {
    const root = tempRoot()
    mkdirSync(path.join(root, 'etc/chrony/sources.d'), { recursive: true })
    const file = path.join(root, 'etc/chrony/sources.d/cwai.sources')
    writeFileSync(file, 'server old.example.org iburst\n')
    const failing = runner({ 'chronyc reload sources': { code: 1, stderr: '501 Not authorised' } })
    await expect(writeNtpServers('chrony', ['new.example.org'], { root, run: failing.run })).rejects.toMatchObject({ id: 'TimeServiceFailed', item: { details: { reason: 'chronyc reload sources: 501 Not authorised' } } })
    expect(readFileSync(file, 'utf8')).toBe('server old.example.org iburst\n')
    expect(failing.calls).toEqual(['chronyc reload sources', 'chronyc reload sources'])
    await writeNtpServers('chrony', ['new.example.org', '2001:db8::1'], { root, run: runner({}).run })
    expect(readFileSync(file, 'utf8')).toMatch(/server new\.example\.org iburst\nserver 2001:db8::1 iburst\n$/)
    const denied = runner({ 'chronyc reload sources': { code: 1, stderr: 'Permission denied' } })
    await expect(writeNtpServers('chrony', ['x.example.org'], { root, run: denied.run })).rejects.toMatchObject({ id: 'TimeChangeNotPermitted' })
  })

  it('refuses chrony without a sources folder', async () => {
    await expect(writeNtpServers('chrony', ['a.example.org'], { root: tempRoot(), run: runner({}).run })).rejects.toMatchObject({ id: 'TimeServiceUnavailable' })
  })
})

describe('SNTP drift', () => {
  it('measures the offset of a server whose clock runs 5 s ahead', async () => {
    const AHEAD = 5000
    const server = createSocket('udp4')
    server.on('message', (request, peer) => {
      const reply = Buffer.alloc(48)
      reply[0] = (4 << 3) | 4
      reply[1] = 2
      request.copy(reply, 24, 40, 48) // originate = the client's transmit
      const now = Date.now() + AHEAD
      writeTimestamp(reply, 32, now)
      writeTimestamp(reply, 40, now)
      server.send(reply, peer.port, peer.address)
    })
    await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve))
    try {
      const sample = await sntpQuery('127.0.0.1', { port: server.address().port, timeoutMs: 2000 })
      expect(sample.stratum).toBe(2)
      expect(Math.abs(sample.offsetMs - AHEAD)).toBeLessThanOrEqual(50)
      expect(sample.delayMs).toBeGreaterThanOrEqual(0)
    } finally {
      server.close()
    }
    await expect(sntpQuery('127.0.0.1', { port: 9, timeoutMs: 300 })).rejects.toThrow()
  })
})
