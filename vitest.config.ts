import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // One file at a time: integration tests start real runtimes, sidecars, brokers, ffmpeg and
    // an RTSP server, which on a 2-core machine already use both cores; two files at once made
    // camera sessions time out and let one file take a port another had just found free.
    fileParallelism: false,
    maxWorkers: 1,
    reporters: ['default'],
  },
})
