import { randomUUID } from 'node:crypto'
import type { EventEmitter } from 'node:events'
import { STATUS_CODES, maxHeaderSize, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { failure } from '../../shared/envelope.ts'
import { ApiError } from '../../shared/errors/index.ts'

/**
 * Requests node:http refuses before the app sees them (URL and headers over `maxHeaderSize`,
 * malformed HTTP, headers that never finish) are answered in the envelope too (spec 2.1), not
 * with node's bare status line. The connection is closed afterwards: its framing is unknown.
 */
export function answerClientErrors(server: EventEmitter): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    // The server keeps node's default limit (16 KB, or --max-http-header-size).
    const answer = errorOf(error, maxHeaderSize)
    const body = JSON.stringify(failure([answer.item]))
    socket.end(`HTTP/1.1 ${answer.httpStatus} ${STATUS_CODES[answer.httpStatus]}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`)
  })
}

/**
 * An `Expect` other than `100-continue` (RFC 9110 10.1.1): node:http would answer a bare 417
 * without a body; it is answered in the envelope too, and the connection closed, since the
 * body the client may still send is never read.
 */
export function answerUnmetExpectations(server: EventEmitter): void {
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const expectation = String(request.headers.expect ?? '').slice(0, 100)
    const error = new ApiError('InvalidParam', {
      details: { field: 'Expect', reason: 'only 100-continue is supported', received: expectation },
      msgText: 'Invalid request: only the expectation 100-continue is supported', httpStatus: 417,
    })
    const body = JSON.stringify(failure([error.item]))
    response.writeHead(417, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'X-Request-Id': randomUUID(), Connection: 'close' })
    response.end(body)
  })
}

function errorOf(error: NodeJS.ErrnoException, limitBytes: number): ApiError {
  if (error.code === 'HPE_HEADER_OVERFLOW') return new ApiError('HTTP_HEADERS_TOO_LARGE', { details: { limitBytes } })
  const timedOut = error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
  const reason = timedOut ? 'the request did not arrive in time' : 'not a valid HTTP request'
  return new ApiError('InvalidParam', { details: { field: '/', reason, code: error.code ?? null }, msgText: `Invalid request: ${reason}`, httpStatus: timedOut ? 408 : 400 })
}
