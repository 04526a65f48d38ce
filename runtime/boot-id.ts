import { randomUUID } from 'node:crypto'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * spec 4.11 `bootId`: the identity of this boot of the device (docs/system.md "Device status
 * and restart"). On this device the spec's reboot — the one an upgrade or a rollback goes
 * through, after which the start-up script installs — is a start of the device process by its
 * supervisor, so every such start is a new boot: the supervisor hands a fresh id to each start
 * (DEVICE_BOOT_ID); an operating-system reboot restarts the supervisor and so changes it too.
 * A device started without the supervisor makes its own at start.
 */
export function deviceBootId(env: NodeJS.ProcessEnv): string {
  const given = env.DEVICE_SUPERVISED === '1' ? env.DEVICE_BOOT_ID : undefined
  return given && UUID.test(given) ? given : randomUUID()
}
