import { rmSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { EngineError } from './engine-error.ts'
import type { InferenceEngine } from './engine.ts'
import type { EngineImage } from './image-intake.ts'
import type { LoadedManifest } from '../../models/load-manifests.ts'
import type { DetectionResultCore } from '../../shared/inference/types.ts'
import { encodeFrame, FrameDecoder, packVectors, RECOGNIZE_CALL, type Frame, type WireError } from './protocol.ts'
import type { GalleryMatch, Recognize } from '../../shared/galleries/types.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { inspectOnnx } from '../../shared/models/onnx.ts'
import { monotonicNow } from '../../shared/clock.ts'

/**
 * The sidecar's socket server: decodes request frames, runs them on the engine (several at
 * once; onnxruntime and sharp work off the JS thread) and answers each by id.
 */
export function serveEngine(engine: InferenceEngine, socketPath: string, installRoots: string[] = []): Promise<net.Server> {
  rmSync(socketPath, { force: true })
  const toWireError = wireErrorWithout(installRoots)
  const server = net.createServer((socket) => {
    const decoder = new FrameDecoder()
    // Detections in flight by request id, so that `cancel` (and a closed connection) reach them.
    const running = new Map<number, AbortController>()
    const reply = (header: object, body?: Uint8Array) => {
      if (socket.destroyed) return
      socket.cork()
      for (const part of encodeFrame(header, body)) socket.write(part)
      socket.uncork()
    }
    // Calls to the runtime (gallery search, protocol.ts RECOGNIZE_CALL) awaiting its reply.
    const calls = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>()
    let nextCall = 1
    const recognize: Recognize = ({ kind, descriptors, galleryIds, model }) => new Promise((resolve, reject) => {
      if (socket.destroyed) { reject(new Error('runtime connection closed')); return }
      const id = nextCall++
      calls.set(id, { resolve: resolve as (v: unknown) => void, reject })
      reply({ call: RECOGNIZE_CALL, id, kind, count: descriptors.length, dims: descriptors[0]?.length ?? 0, galleryIds, model }, packVectors(descriptors))
    }) as Promise<(GalleryMatch | null)[]>
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
        const id = frame.header.id as number
        if (frame.header.reply === true) {
          const call = calls.get(id)
          calls.delete(id)
          const error = frame.header.error as WireError | undefined
          if (frame.header.ok) call?.resolve(frame.header.result)
          else call?.reject(new EngineError(error!.errorId, error!.message, error!.details))
          continue
        }
        const controller = frame.header.op === 'detect' || frame.header.op === 'overlay' ? new AbortController() : null
        if (controller) running.set(id, controller)
        if (frame.header.op === 'cancel') running.get(frame.header.target as number)?.abort()
        handle(engine, frame, recognize, controller?.signal).then(
          ({ result, body }) => reply({ id, ok: true, result }, body),
          (error: unknown) => reply({ id, ok: false, error: toWireError(error) }),
        ).finally(() => { if (controller) running.delete(id) })
      }
    })
    socket.on('error', () => socket.destroy())
    socket.on('close', () => { for (const controller of running.values()) controller.abort() })
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(socketPath, () => resolve(server))
  })
}

/**
 * Errors as the runtime passes them on to clients: paths under the installation or DATA_DIR
 * (`installRoots`, e.g. in onnxruntime's "Load model from <path> failed") are made relative,
 * so an answer never shows where the device is installed.
 */
function wireErrorWithout(installRoots: string[]): (error: unknown) => WireError {
  const prefixes = installRoots.map((root) => `${path.resolve(root)}${path.sep}`).sort((a, b) => b.length - a.length)
  const relative = (text: string) => prefixes.reduce((out, prefix) => out.replaceAll(prefix, ''), text)
  const relativeDetails = (details: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(details).map(([key, value]) => [key, typeof value === 'string' ? relative(value) : value]))
  return (error) => {
    if (error instanceof EngineError) {
      const retry = error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }
      return { errorId: error.errorId, message: relative(error.message), details: relativeDetails(error.details), ...retry }
    }
    if (error instanceof ApiError) return { errorId: error.id, message: relative(error.message), details: relativeDetails(error.item.details) }
    return { errorId: 'Internal', message: error instanceof Error ? error.message : String(error), details: {} }
  }
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

async function handle(engine: InferenceEngine, frame: Frame, recognize: Recognize, signal?: AbortSignal): Promise<{ result: unknown; body?: Uint8Array }> {
  const h = frame.header
  switch (h.op) {
    case 'ping': return { result: { pid: process.pid } }
    case 'stats': return { result: engine.stats() }
    case 'cancel': return { result: null }
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
        // What was left of the caller's deadline when it sent the request, on this process's monotonic clock.
        ...(typeof h.budgetMs === 'number' ? { deadline: monotonicNow() + h.budgetMs } : {}),
        overlay: h.overlay !== false,
        ...jpegOf(h.jpeg),
        ...(signal ? { signal } : {}),
      }, recognize)
      return { result: { result: outcome.result, timings: outcome.timings }, ...(outcome.overlayJpeg ? { body: outcome.overlayJpeg } : {}) }
    }
    case 'overlay': {
      const jpeg = await engine.renderOverlay({
        image: imageOf(frame),
        result: h.result as DetectionResultCore,
        purpose: typeof h.purpose === 'string' ? h.purpose : 'image',
        ...jpegOf(h.jpeg),
        ...(signal ? { signal } : {}),
      })
      return { result: null, body: jpeg }
    }
    case 'describe': {
      const regions = await engine.describe({ algorithmId: str(h.algorithmId, 'algorithmId'), image: imageOf(frame), purpose: typeof h.purpose === 'string' ? h.purpose : 'image', pictures: h.pictures === true })
      // Body: the descriptors back to back, then each region's picture.
      const pictures = regions.map((f) => f.picture ?? Buffer.alloc(0))
      return {
        result: { dims: regions[0]?.descriptor.length ?? 0, model: regions[0]?.model ?? null, regions: regions.map((f, i) => ({ box: f.box, score: f.score, landmark: f.landmark, pictureBytes: pictures[i]!.length })) },
        body: Buffer.concat([packVectors(regions.map((f) => f.descriptor)), ...pictures]),
      }
    }
    default: throw new EngineError('InvalidParam', `unknown op ${String(h.op)}`, { field: 'op' })
  }
}

/** The overlay's JPEG settings from a request header, when well formed (the runtime's image quality). */
function jpegOf(value: unknown): { jpeg?: { quality: number; maxSide: number } } {
  const j = value as { quality?: unknown; maxSide?: unknown } | undefined
  const ok = (n: unknown, min: number, max: number) => Number.isInteger(n) && (n as number) >= min && (n as number) <= max
  return j && ok(j.quality, 1, 100) && ok(j.maxSide, 0, 65_535) ? { jpeg: { quality: j.quality as number, maxSide: j.maxSide as number } } : {}
}
