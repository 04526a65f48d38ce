/**
 * Entry of the inference sidecar process (built to dist/runtime/sidecar.mjs). Started by
 * the runtime's supervisor with its options as one JSON argument; reports `ready` over the
 * IPC channel once the socket listens, and exits when the runtime goes away.
 */
import { InferenceEngine } from './engine.ts'
import { serveEngine } from './server.ts'

export interface SidecarLaunchOptions {
  socketPath: string
  projectRoot: string
  dataPath?: string
  intraOpThreads: number
  maxEncodedImageBytes: number
  maxImagePixels: number
}

async function main() {
  const options = JSON.parse(process.argv[2] ?? '{}') as SidecarLaunchOptions
  const engine = new InferenceEngine({
    projectRoot: options.projectRoot,
    // The runtime's algorithm registry defines every algorithm over the socket (op `define`).
    manifestDir: false,
    ...(options.dataPath ? { dataPath: options.dataPath } : {}),
    intraOpThreads: options.intraOpThreads,
    limits: { maxEncodedImageBytes: options.maxEncodedImageBytes, maxImagePixels: options.maxImagePixels },
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
