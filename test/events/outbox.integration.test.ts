import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { count, eq } from 'drizzle-orm'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import { connectEvents } from '../helpers/ws-client.ts'
import { events, users } from '../../shared/db/schema/index.ts'
import { issueSession } from '../../runtime/auth/sessions.ts'
import { Outbox } from '../../runtime/events/outbox.ts'
import { createClient } from '@libsql/client'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

// The outbox and the WebSocket channel on real services (libsql file database, real ws
// listener on a free port), driven in-process.
describe('event outbox', () => {
  let t: TestRuntime
  beforeEach(async () => {
    t = await createTestRuntime({ wsPort: 0, wsHost: '127.0.0.1', initialPasswordChangeRequired: false, eventPollMs: 100, wsMaxBufferedBytes: 256 * 1024, eventRetentionMaxRows: 1000 })
    await t.runtime.start()
  })
  afterEach(async () => {
    await t.close()
  })
  const token = async () => {
    const [admin] = await t.runtime.services.db.select().from(users).where(eq(users.accountName, 'admin'))
    return issueSession(t.runtime.services.db, admin!.id, t.clock.now())
  }

  it('writes an event in the caller\'s transaction: a rollback leaves no event', async () => {
    const { db, events: ev } = t.runtime.services
    await expect(db.transaction(async (tx) => {
      await ev.emit('login.locked', { accountName: 'rolled-back', failures: 1, lockedUntil: 0 }, { tx })
      throw new Error('state change failed')
    })).rejects.toThrow('state change failed')
    const id = await db.transaction(async (tx) => ev.emit('login.locked', { accountName: 'committed', failures: 1, lockedUntil: 0 }, { tx }))
    const rows = await db.select().from(events).where(eq(events.kind, 'login.locked'))
    expect(rows.map((r) => JSON.parse(r.payload).accountName)).toEqual(['committed'])
    expect(rows[0]!.id).toBe(id)
  })

  it('writes an event emitted while another part of the device holds a write transaction once it ends, instead of losing it', async () => {
    const { db, events: ev } = t.runtime.services
    // A clip being stored with its links (runtime/recording/store.ts) while a stream task writes an object.left.
    let emitted: Promise<number> | null = null
    await db.transaction(async (tx) => {
      await tx.update(users).set({ passwordChangedAt: 1 }).where(eq(users.accountName, 'admin'))
      emitted = ev.emit('object.left', { taskId: 'door', cameraId: 'cam', objectId: '7', label: 'person', dwellMs: 4000 })
      // The outbox's group window passes while the transaction is open.
      await new Promise((resolve) => setTimeout(resolve, 50))
    })
    const id = await emitted!
    const [row] = await db.select().from(events).where(eq(events.id, id))
    expect(row).toMatchObject({ kind: 'object.left' })
    expect(JSON.parse(row!.payload)).toMatchObject({ objectId: '7', dwellMs: 4000 })
  })

  it('refuses an unknown kind', async () => {
    await expect(t.runtime.services.events.emit('no.such' as never, {})).rejects.toThrow(/unknown event kind/)
  })

  it('keeps at most the configured number of events (bounded retention)', async () => {
    const { events: ev, db } = t.runtime.services
    await Promise.all(Array.from({ length: 1500 }, (_, i) => ev.emit('passengerFlow.counted', { taskId: 't', cameraId: null, in: i, out: 0 })))
    // The prune that runs at start and every minute, run now.
    const client = createClient({ url: t.config.databaseUrl })
    const outbox = new Outbox(db, client, t.clock, t.runtime.services.log)
    expect(await outbox.prune(0, 1000)).toBe(500)
    const [left] = await db.select({ n: count() }).from(events)
    expect(left!.n).toBe(1000)
    t.clock.advance(8 * 24 * 60 * 60 * 1000)
    expect(await outbox.prune(7 * 24 * 60 * 60 * 1000, 1000)).toBe(1000)
    client.close()
  })

  it('disconnects a WebSocket client that does not read, while a reading client gets everything', async () => {
    const mtk = await token()
    const port = (await t.runtime.services.events.settings.status()).websocket.port
    const stalled = connectEvents(port, { mtk })
    const reader = connectEvents(port, { mtk, query: { kinds: 'passengerFlow.counted' } })
    await stalled.waitFor((f) => f.type === 'ready')
    await reader.waitFor((f) => f.type === 'ready')
    // Stop reading: the socket's buffers fill, then the server's send buffer grows.
    ;(stalled.ws as unknown as { _socket: { pause(): void } })._socket.pause()
    const big = 'x'.repeat(16 * 1024)
    const total = 1000
    for (let i = 0; i < total; i += 100)
      await Promise.all(Array.from({ length: 100 }, (_, j) => t.runtime.services.events.emit('passengerFlow.counted', { taskId: 'bp', cameraId: big, in: i + j, out: 0 })))
    await reader.waitFor((f) => f.type === 'event' && f.event.payload.in === total - 1, 30_000)
    expect(reader.events().map((e) => e.payload.in)).toEqual(Array.from({ length: total }, (_, i) => i))
    const deadline = Date.now() + 15_000
    while ((await t.runtime.services.events.settings.status()).websocket.clients > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect((await t.runtime.services.events.settings.status()).websocket.clients).toBe(1)
    reader.ws.close()
    stalled.ws.terminate()
  })
})

describe('sidecar.restarted producer', () => {
  it('emits one event per restart from the supervisor notifications, none for the first start', async () => {
    const t = await createTestRuntime()
    try {
      const { EventEmitter } = await import('node:events')
      const { emitSidecarRestarts } = await import('../../runtime/events/producers.ts')
      const supervisor = new EventEmitter()
      emitSidecarRestarts(supervisor, t.runtime.services.events, t.runtime.services.log)
      supervisor.emit('ready', { pid: 1, generation: 1 })
      supervisor.emit('exit', { code: null, signal: 'SIGKILL', generation: 1 })
      supervisor.emit('ready', { pid: 2, generation: 2 })
      const deadline = Date.now() + 5000
      let rows: (typeof events.$inferSelect)[] = []
      while (rows.length === 0 && Date.now() < deadline) {
        rows = await t.runtime.services.db.select().from(events).where(eq(events.kind, 'sidecar.restarted'))
        await new Promise((r) => setTimeout(r, 20))
      }
      expect(rows.map((r) => [r.source, JSON.parse(r.payload)])).toEqual([['sidecar', { exitCode: null, signal: 'SIGKILL', restarts: 1 }]])
    } finally {
      await t.close()
    }
  })

  it('six quick kills of a real supervised process, most before it is ready, give six events numbered as Info counts restarts', async () => {
    const t = await createTestRuntime()
    const dir = mkdtempSync(path.join(tmpdir(), 'sidecar-kills-'))
    // A stand-in sidecar: ready over IPC after 300 ms, like the real one after loading.
    const entry = path.join(dir, 'sidecar.mjs')
    writeFileSync(entry, "setTimeout(() => process.send({ type: 'ready', pid: process.pid }), 300); process.on('disconnect', () => process.exit(0))\n")
    const { SidecarSupervisor } = await import('../../runtime/inference/supervisor.ts')
    const { emitSidecarRestarts } = await import('../../runtime/events/producers.ts')
    const supervisor = new SidecarSupervisor({
      entry, launch: { socketPath: path.join(dir, 's.sock'), projectRoot: dir, intraOpThreads: 1, maxEncodedImageBytes: 1, maxImagePixels: 1, decodeMemoryBudgetBytes: 1, decodeQueueMax: 1, decodeQueueWaitMs: 1 },
      backoff: { initialMs: 10, maxMs: 10, stableMs: 60_000 },
    })
    try {
      emitSidecarRestarts(supervisor, t.runtime.services.events, t.runtime.services.log)
      await supervisor.start()
      for (let kill = 0; kill < 6; kill++) {
        // Kill each new process as soon as it exists; the first one after it became ready.
        while (supervisor.pid === null) await new Promise((r) => setTimeout(r, 5))
        const exited = new Promise((resolve) => supervisor.once('exit', resolve))
        process.kill(supervisor.pid, 'SIGKILL')
        await exited
      }
      await new Promise((resolve) => supervisor.once('ready', resolve))
      const restarts = supervisor.generation - 1 // what Info reports (runtime/aihost/wire-inference.ts)
      expect(restarts).toBe(6)
      let rows: (typeof events.$inferSelect)[] = []
      const deadline = Date.now() + 5000
      while (rows.length < 6 && Date.now() < deadline) {
        rows = await t.runtime.services.db.select().from(events).where(eq(events.kind, 'sidecar.restarted'))
        await new Promise((r) => setTimeout(r, 20))
      }
      expect(rows.map((r) => JSON.parse(r.payload))).toEqual([1, 2, 3, 4, 5, 6].map((n) => ({ exitCode: null, signal: 'SIGKILL', restarts: n })))
    } finally {
      await supervisor.stop()
      await t.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
