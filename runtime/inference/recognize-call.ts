import type net from 'node:net'
import { ApiError } from '../../shared/errors/index.ts'
import type { Recognize } from '../../shared/galleries/types.ts'
import { GALLERY_KINDS } from '../../shared/galleries/kinds.ts'
import { encodeFrame, unpackVectors } from '../sidecar/protocol.ts'
import type { SupervisorLog } from './supervisor.ts'

/**
 * Answers the one call the sidecar makes back (runtime/sidecar/protocol.ts RECOGNIZE_CALL): the gallery search
 * of a `recognizer` node's descriptors during a detection (docs/architecture.md "The inference
 * sidecar"), run by `recognize` (runtime/galleries).
 */
export function answerRecognize(socket: net.Socket, header: Record<string, unknown>, body: Buffer, recognize: Recognize | null, log: SupervisorLog | undefined): void {
  const answer = (reply: object) => {
    if (socket.destroyed) return
    socket.cork()
    for (const part of encodeFrame({ reply: true, id: header.id, ...reply })) socket.write(part)
    socket.uncork()
  }
  const fail = (error: unknown) => {
    log?.error({ err: (error as Error).message }, 'gallery search for the sidecar failed')
    const wire = error instanceof ApiError ? { errorId: error.id, message: error.message, details: error.item.details } : { errorId: 'Internal', message: 'gallery search failed', details: {} }
    answer({ ok: false, error: wire })
  }
  try {
    if (!recognize) throw new Error('no gallery search is set')
    const kind = GALLERY_KINDS.find((k) => k === header.kind)
    if (!kind) throw new Error(`unknown gallery kind ${String(header.kind)}`)
    const descriptors = unpackVectors(body, Number(header.count), Number(header.dims))
    recognize({ kind, descriptors, galleryIds: (header.galleryIds ?? []) as string[], model: String(header.model) }).then((result) => answer({ ok: true, result }), fail)
  } catch (error) {
    fail(error)
  }
}
