import { describe, expect, it } from 'vitest'
import { CameraChannel } from '../../runtime/cameras/channel.ts'
import type { Reader, ReaderHandlers } from '../../runtime/cameras/reader.ts'

/** A reader that records what happened to it; its handlers stay reachable so the test can drive it. */
class RecordingReader implements Reader {
  started = false
  stopped = false
  readonly pid = null
  constructor(readonly source: string, readonly handlers: ReaderHandlers) {}
  start(): void { this.started = true }
  async stop(): Promise<void> { this.stopped = true }
  frame(): void { this.handlers.onFrame({ rgb: Buffer.alloc(3), width: 1, height: 1, source: { width: 1, height: 1 }, time: Date.now(), at: performance.now() }) }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

describe('the camera channel (one connection state machine per consumer)', () => {
  it('a restart while a reader is still being opened leaves one reader, on the new source', async () => {
    let source = 'old'
    const readers: RecordingReader[] = []
    const pending: (() => void)[] = []
    const statuses: string[] = []
    const channel = new CameraChannel({
      // Opening takes a while (host resolution, an HTTP probe): it completes when the test says.
      openReader: (handlers) => {
        const reader = new RecordingReader(source, handlers)
        readers.push(reader)
        return new Promise<Reader>((resolve) => pending.push(() => resolve(reader)))
      },
      onFrame: () => {},
      reconnectMinMs: 10,
      reconnectMaxMs: 20,
      onStatus: (status) => statuses.push(status),
    })
    channel.start()
    source = 'new'
    const restarted = channel.restart()
    await restarted
    expect(readers.map((r) => r.source)).toEqual(['old', 'new'])
    pending[1]!()
    await tick()
    pending[0]!() // the stale open completes last
    await tick()
    expect(readers[0]).toMatchObject({ started: false, stopped: true })
    expect(readers[1]).toMatchObject({ started: true, stopped: false })
    // The stale reader's frames and failures change nothing.
    readers[0]!.frame()
    readers[0]!.handlers.onFailure(Object.assign(new Error('gone'), { id: 'CameraUnreachable' }) as never)
    expect(channel.status).toBe('connecting')
    readers[1]!.frame()
    expect(channel.status).toBe('online')
    expect(statuses).toEqual(['online'])
    await channel.stop()
    expect(readers[1]!.stopped).toBe(true)
  })
})
