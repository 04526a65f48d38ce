import { rmSync } from 'node:fs'
import net from 'node:net'
import { EngineError } from './engine-error.ts'
import type { EngineImage, InferenceEngine } from './engine.ts'
import type { LoadedManifest } from '../../models/load-manifests.ts'
import { encodeFrame, FrameDecoder, packVectors, RECOGNIZE_CALL, type Frame, type WireError } from './protocol.ts'
import type { FaceMatch, Recognize } from '../../shared/galleries/types.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { inspectOnnx } from '../../shared/models/onnx.ts'

/**
 * The sidecar's socket server: decodes request frames, runs them on the engine (several at
 * once; onnxruntime and sharp work off the JS thread) and answers each by id.
 */
export function serveEngine(engine: InferenceEngine, socketPath: string): Promise<net.Server> {
  rmSync(socketPath, { force: true })
  const server = net.createServer((socket) => {
    const decoder = new FrameDecoder()
    const reply = (header: object, body?: Uint8Array) => {
      if (socket.destroyed) return
      socket.cork()
      for (const part of encodeFrame(header, body)) socket.write(part)
      socket.uncork()
    }
    // Calls to the runtime (gallery search, protocol.ts RECOGNIZE_CALL) awaiting its reply.
    const calls = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>()
    let nextCall = 1
    const recognize: Recognize = ({ descriptors, galleryIds }) => new Promise((resolve, reject) => {
      if (socket.destroyed) { reject(new Error('runtime connection closed')); return }
      const id = nextCall++
      calls.set(id, { resolve: resolve as (v: unknown) => void, reject })
      reply({ call: RECOGNIZE_CALL, id, count: descriptors.length, dims: descriptors[0]?.length ?? 0, galleryIds }, packVectors(descriptors))
    }) as Promise<(FaceMatch | null)[]>
    socket.on('close', () => {
      for (const call of calls.values()) call.reject(new Error('runtime connection closed'))
      calls.clear()
    })
    socket.on('data', (chunk) => {
      let frames: Frame[]
      try {
        frames = decoder.push(chunk)
      } catch (error) {
        socket.destroy(error as Error)
        return
      }
      for (const frame of frames) {
        const id = frame.header.id
        if (frame.header.reply === true) {
          const call = calls.get(id as number)
          calls.delete(id as number)
          const error = frame.header.error as WireError | undefined
          if (frame.header.ok) call?.resolve(frame.header.result)
          else call?.reject(new EngineError(error!.errorId, error!.message, error!.details))
          continue
        }
        handle(engine, frame, recognize).then(
          ({ result, body }) => reply({ id, ok: true, result }, body),
          (error: unknown) => reply({ id, ok: false, error: toWireError(error) }),
        )
      }
    })
    socket.on('error', () => socket.destroy())
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(socketPath, () => resolve(server))
  })
}

function toWireError(error: unknown): WireError {
  if (error instanceof EngineError) return { errorId: error.errorId, message: error.message, details: error.details }
  if (error instanceof ApiError) return { errorId: error.id, message: error.message, details: error.item.details }
  return { errorId: 'Internal', message: error instanceof Error ? error.message : String(error), details: {} }
}

const str = (v: unknown, name: string): string => {
  if (typeof v !== 'string' || v.length === 0) throw new EngineError('InvalidParam', `${name} must be a non-empty string`, { field: name })
  return v
}

function imageOf(frame: Frame): EngineImage {
  const image = frame.header.image as { kind?: string; path?: string; width?: number; height?: number } | undefined
  switch (image?.kind) {
    case 'path': return { kind: 'path', path: str(image.path, 'image.path') }
    case 'bytes': return { kind: 'bytes', bytes: frame.body }
    case 'rgb': return { kind: 'rgb', width: Number(image.width), height: Number(image.height), data: frame.body }
    default: throw new EngineError('InvalidParam', 'image.kind must be path, bytes or rgb', { field: 'image.kind' })
  }
}

async function handle(engine: InferenceEngine, frame: Frame, recognize: Recognize): Promise<{ result: unknown; body?: Uint8Array }> {
  const h = frame.header
  switch (h.op) {
    case 'ping': return { result: { pid: process.pid } }
    case 'stats': return { result: engine.stats() }
    case 'load':
      await engine.load(str(h.handle, 'handle'), str(h.algorithmId, 'algorithmId'), (h.taskConfig ?? {}) as never)
      return { result: null }
    case 'release':
      await engine.release(str(h.handle, 'handle'))
      return { result: null }
    case 'define':
      engine.define(h.algorithm as LoadedManifest)
      return { result: null }
    case 'inspectModel':
      // Model management validates uploads here, so a model that crashes onnxruntime takes down the sidecar, not the runtime.
      return { result: await inspectOnnx(str(h.path, 'path')) }
    case 'forget':
      engine.forget(str(h.algorithmId, 'algorithmId'))
      return { result: null }
    case 'detect': {
      const outcome = await engine.detect({
        handle: str(h.handle, 'handle'),
        image: imageOf(frame),
        purpose: typeof h.purpose === 'string' ? h.purpose : 'image',
        ...(typeof h.deadline === 'number' ? { deadline: h.deadline } : {}),
        overlay: h.overlay !== false,
      }, recognize)
      return { result: { result: outcome.result, timings: outcome.timings }, ...(outcome.overlayJpeg ? { body: outcome.overlayJpeg } : {}) }
    }
    case 'describeFaces': {
      const faces = await engine.describeFaces({ algorithmId: str(h.algorithmId, 'algorithmId'), image: imageOf(frame), purpose: typeof h.purpose === 'string' ? h.purpose : 'image', pictures: h.pictures === true })
      // Body: the descriptors back to back, then each face's picture.
      const pictures = faces.map((f) => f.picture ?? Buffer.alloc(0))
      return {
        result: { dims: faces[0]?.descriptor.length ?? 0, faces: faces.map((f, i) => ({ box: f.box, score: f.score, landmark: f.landmark, pictureBytes: pictures[i]!.length })) },
        body: Buffer.concat([packVectors(faces.map((f) => f.descriptor)), ...pictures]),
      }
    }
    default: throw new EngineError('InvalidParam', `unknown op ${String(h.op)}`, { field: 'op' })
  }
}
