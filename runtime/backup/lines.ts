import { createReadStream } from 'node:fs'

/**
 * The lines of a file (without their `\n`), read in pieces; a line longer than `maxBytes` stops
 * the reading with an error instead of growing in memory. A last line without `\n` counts.
 */
export async function* boundedLines(file: string, maxBytes: number): AsyncGenerator<string> {
  let pending: Buffer[] = []
  let pendingBytes = 0
  for await (const piece of createReadStream(file, { highWaterMark: 64 * 1024 }) as AsyncIterable<Buffer>) {
    let start = 0
    for (let end = piece.indexOf(10); end !== -1; end = piece.indexOf(10, start)) {
      pending.push(piece.subarray(start, end))
      yield Buffer.concat(pending).toString('utf8')
      pending = []
      pendingBytes = 0
      start = end + 1
    }
    pendingBytes += piece.length - start
    if (pendingBytes > maxBytes) throw new Error(`a line is longer than ${maxBytes} bytes`)
    pending.push(piece.subarray(start))
  }
  if (pendingBytes > 0) yield Buffer.concat(pending).toString('utf8')
}
