/**
 * The device's side of its IPC channel to the supervisor.
 *
 * How the device tells the supervisor it is serving: an IPC message sent once the HTTP server
 * listens. It does not depend on LOG_LEVEL (the `listening` log line is info level and is not
 * printed at warn or higher, which used to roll every upgrade back).
 */
export const DEVICE_READY = 'device.ready'

export interface DeviceReadyMessage {
  type: typeof DEVICE_READY
  port: number
  version: string
}

export function isDeviceReadyMessage(message: unknown): message is DeviceReadyMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === DEVICE_READY
}

/** Releases built before the IPC signal only said so in their info-level `listening` log line. */
export function isLegacyListeningLine(line: string): boolean {
  return line.includes('"msg":"listening"')
}

/** Called by the device once it listens; a no-op when it was not started by the supervisor. */
export function announceReady(port: number, version: string): void {
  if (!process.send) return
  const message: DeviceReadyMessage = { type: DEVICE_READY, port, version }
  // The channel must not keep the device alive on its own once the message is out.
  process.send(message, () => process.channel?.unref())
}

/**
 * Resolves once the supervisor is gone: its IPC channel closes when it dies, even by SIGKILL.
 * Never resolves when the device was not started by the supervisor.
 */
export function supervisorLost(): Promise<void> {
  if (!process.send) return new Promise(() => {})
  // The channel may already have closed while the modules loaded (`disconnect` has been emitted).
  if (!process.connected) return Promise.resolve()
  return new Promise((resolve) => process.once('disconnect', () => resolve()))
}
