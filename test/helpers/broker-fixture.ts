import { deviceTest } from './device-fixture.ts'
import { startBroker } from './mosquitto.ts'

/**
 * The device fixture (device-fixture.ts) with a mosquitto broker of the file's own, started
 * before the device when the device's options name it:
 *
 *   const test = brokerTest
 *   test.override('deviceOptions', { scope: 'file' }, async ({ broker }: { broker: Broker }) => ({ env: { MQTT_URL: broker.url } }))
 */
// eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from this pattern
export const brokerTest = deviceTest.extend('broker', { scope: 'file' }, async ({}, { onCleanup }) => {
  const broker = await startBroker()
  onCleanup(() => broker.cleanup())
  return broker
})
