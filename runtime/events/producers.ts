import type { EventEmitter } from 'node:events'
import type { EventsService } from '../../shared/events/types.ts'
import type { Logger } from '../../shared/handler.ts'

/**
 * `sidecar.restarted` from the sidecar supervisor's own notifications (`exit` with
 * { code, signal }, then `ready` with { generation }): a ready process after the first is a
 * restart. Nothing in the supervisor changes for it.
 */
export function emitSidecarRestarts(supervisor: EventEmitter, events: EventsService, log: Logger): void {
  let lastExit: { code: number | null; signal: string | null } | null = null
  supervisor.on('exit', (exit: { code: number | null; signal: string | null }) => { lastExit = exit })
  supervisor.on('ready', ({ generation }: { generation: number }) => {
    if (generation <= 1) return
    const payload = { exitCode: lastExit?.code ?? null, signal: lastExit?.signal ?? null, restarts: generation - 1 }
    events.emit('sidecar.restarted', payload).catch((error) => log.error({ err: error }, 'sidecar.restarted event not written'))
  })
}
