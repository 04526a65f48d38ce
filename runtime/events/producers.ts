import type { EventEmitter } from 'node:events'
import type { EventsService } from '../../shared/events/types.ts'
import type { Logger } from '../../shared/handler.ts'
import { onSidecarRestart } from '../inference/supervisor.ts'

/** `sidecar.restarted` from the sidecar supervisor's own notifications; nothing in the supervisor changes for it. */
export function emitSidecarRestarts(supervisor: EventEmitter, events: EventsService, log: Logger): void {
  onSidecarRestart(supervisor, (payload) => {
    events.emit('sidecar.restarted', payload).catch((error) => log.error({ err: error }, 'sidecar.restarted event not written'))
  })
}
