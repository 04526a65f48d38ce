import type { CapacityTarget } from './run.ts'
import type { RgbFrame } from './image-frames.ts'

/**
 * The capacity target over the device's inference sidecar: one sidecar process started and
 * supervised as the runtime does, one pipeline handle per (task, channel), camera frames
 * sent as raw RGB through the sidecar's frame path.
 *
 * The sidecar is not on this branch yet; until it lands this reports so and the runner
 * stops before measuring anything.
 */
export async function createSidecarTarget(_o: { frameDir: string | null }): Promise<CapacityTarget<RgbFrame> & { close(): Promise<void> }> {
  throw new Error('the inference sidecar (runtime/sidecar) is not available on this branch yet: the capacity runner cannot reach a frame path')
}
