import type { EventEmitter } from 'node:events'
import type { EventsService } from '../../shared/events/types.ts'
import type { Logger } from '../../shared/handler.ts'

/**
 * `sidecar.restarted` from the sidecar supervisor's own notifications (`exit` with
 * { code, signal }, then `ready` with { generation }): a ready process after the first is a
 * restart. A process killed before it became ready was a restart too (Info counts every
 * spawn after the first): each exit since the last ready gets its own event, numbered so that
 * the last one's `restarts` is Info's count. Nothing in the supervisor changes for it.
 */
export function emitSidecarRestarts(supervisor: EventEmitter, events: EventsService, log: Logger): void {
  let exits: { code: number | null; signal: string | null }[] = []
  supervisor.on('exit', (exit: { code: number | null; signal: string | null }) => { exits.push(exit) })
  supervisor.on('ready', ({ generation }: { generation: number }) => {
    const since = exits
    exits = []
    if (generation <= 1) return
    // Generation g is restart g-1; the n exits before it were restarts g-n … g-1.
    since.forEach((exit, index) => {
      const payload = { exitCode: exit.code, signal: exit.signal, restarts: generation - since.length + index }
      events.emit('sidecar.restarted', payload).catch((error) => log.error({ err: error }, 'sidecar.restarted event not written'))
    })
  })
}
