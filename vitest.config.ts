import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration tests start real runtimes, sidecars and brokers; the machine has 2 cores.
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default'],
  },
})
