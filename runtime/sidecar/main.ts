/**
 * Entry of the inference sidecar process (built to dist/runtime/sidecar.mjs). Started by
 * the runtime's supervisor with its options as one JSON argument; reports `ready` over the
 * IPC channel once the socket listens, and exits when the runtime goes away.
 */
import sharp from 'sharp'
import { InferenceEngine } from './engine.ts'
import { automaticBudgetBytes, MemoryBudget } from './image/memory-budget.ts'
import { serveEngine } from './server.ts'

export interface SidecarLaunchOptions {
  socketPath: string
  projectRoot: string
  dataPath?: string
  intraOpThreads: number
  maxEncodedImageBytes: number
  maxImagePixels: number
  /** 0 = automatic (memory-budget.ts). */
  decodeMemoryBudgetBytes: number
  decodeQueueMax: number
  decodeQueueWaitMs: number
  /** IMAGE_SHRINK_ON_LOAD (engine.ts EngineOptions.shrinkOnLoad); default true. */
  shrinkOnLoad?: boolean
}

/**
 * Released images are collected at once only when that memory is wanted: work waits for
 * memory, or the images in use and those released would exceed the budget. Otherwise V8
 * frees them itself (a scavenge frees an image that died young), and what is left goes once
 * the sidecar has had no release for this long. A full GC on every 64 MB released cost a
 * 1920×1280 detection ~10 ms (V8 then kept starting incremental marks: 83 mark-compacts in
 * 120 detections instead of 2).
 */
const IDLE_RECLAIM_MS = 250

async function main() {
  const options = JSON.parse(process.argv[2] ?? '{}') as SidecarLaunchOptions
  // libvips' operation cache would keep the last images' pixels after their requests.
  sharp.cache(false)
  // As many libvips threads per image as onnxruntime has per inference (INFERENCE_THREADS,
  // shared/config.ts threadsForMachine: measured best on 2 cores; sharp's own default on glibc is 1).
  sharp.concurrency(Math.max(1, options.intraOpThreads))
  // A decoded image is a Buffer freed only when V8 collects it, and V8 does not hurry for
  // memory outside its heap: collected here when that memory is wanted (IDLE_RECLAIM_MS), so
  // that the RSS follows the budget and comes back down after a burst (the supervisor passes
  // --expose-gc).
  const gc = globalThis.gc
  let unreclaimed = 0
  let idle: NodeJS.Timeout | undefined
  const collect = () => { unreclaimed = 0; clearTimeout(idle); idle = undefined; gc?.() }
  const memory: MemoryBudget = new MemoryBudget({
    capacityBytes: options.decodeMemoryBudgetBytes || automaticBudgetBytes(),
    maxWaiting: options.decodeQueueMax,
    maxWaitMs: options.decodeQueueWaitMs,
    reclaim: (released) => {
      unreclaimed += released
      const { inUseBytes, waiting, budgetBytes } = memory.stats()
      if (waiting > 0 || inUseBytes + unreclaimed > budgetBytes) collect()
      else if (idle) idle.refresh()
      else idle = setTimeout(collect, IDLE_RECLAIM_MS).unref()
    },
  })
  const engine = new InferenceEngine({
    projectRoot: options.projectRoot,
    // The runtime's algorithm registry defines every algorithm over the socket (op `define`).
    manifestDir: false,
    ...(options.dataPath ? { dataPath: options.dataPath } : {}),
    intraOpThreads: options.intraOpThreads,
    limits: { maxEncodedImageBytes: options.maxEncodedImageBytes, maxImagePixels: options.maxImagePixels },
    memory,
    shrinkOnLoad: options.shrinkOnLoad !== false,
  })
  await serveEngine(engine, options.socketPath, [options.projectRoot, ...(options.dataPath ? [options.dataPath] : [])])
  process.send?.({ type: 'ready', pid: process.pid })
}

// The runtime owns this process: when it goes (even by SIGKILL) the IPC channel closes, and
// the runtime stops it by closing the channel once its own requests are done. SIGTERM/SIGINT
// to the whole process group (systemd, Ctrl-C) must not cut inferences the runtime still
// waits for, so they end the process only when it has no runtime.
process.on('disconnect', () => process.exit(0))
const onSignal = () => { if (!process.connected) process.exit(0) }
process.on('SIGTERM', onSignal)
process.on('SIGINT', onSignal)

main().catch((error) => {
  console.error(`sidecar failed to start: ${(error as Error).stack ?? error}`)
  process.exit(1)
})
