// pino-roll ships no type declarations; the part of its API the runtime uses. The stream is a
// sonic-boom SonicBoom (its options pass through), an EventEmitter ('error', 'drop', 'write').
declare module 'pino-roll' {
  import type { EventEmitter } from 'node:events'
  import type { DestinationStream } from 'pino'
  interface RollStream extends DestinationStream, EventEmitter { flushSync(): void; end(): void }
  export default function build(options: {
    file: string
    extension?: string
    size?: string | number
    frequency?: string | number
    mkdir?: boolean
    limit?: { count?: number; removeOtherLogFiles?: boolean }
    /** sonic-boom: bytes kept while writes fail; beyond, lines are dropped ('drop'). */
    maxLength?: number
  }): Promise<RollStream>
}
