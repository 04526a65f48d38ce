// pino-roll ships no type declarations; the part of its API the runtime uses.
declare module 'pino-roll' {
  import type { DestinationStream } from 'pino'
  interface RollStream extends DestinationStream { flushSync(): void; end(): void }
  export default function build(options: {
    file: string
    extension?: string
    size?: string | number
    frequency?: string | number
    mkdir?: boolean
    limit?: { count?: number; removeOtherLogFiles?: boolean }
  }): Promise<RollStream>
}
