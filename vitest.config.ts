import { defineConfig } from 'vitest/config'
import type { TestProjectInlineConfiguration } from 'vitest/config'

/**
 * The suite's four projects, each file named by its own (`*.unit.test.ts`, …): docs/developing.md,
 * "Tests". Two groups, one after the other (`sequence.groupOrder`), longest files first in each
 * (test/helpers/sequencer.ts, by the committed test/durations.json):
 * - the e2e files, which spend most of their time waiting on real-time footage, restarts and
 *   upgrades, E2E_WORKERS at once;
 * - then the integration, browser and unit files, which keep the cores busy, MAX_WORKERS at once.
 */
/** Measured on the 2-core machine (bench/README.md, "Test suite"). */
const E2E_WORKERS = 4
const MAX_WORKERS = 3

const project = (name: string, options: TestProjectInlineConfiguration['test'] = {}): TestProjectInlineConfiguration => ({
  extends: true,
  test: { name, include: [`test/**/*.${name}.test.ts`], ...options },
})
/** Files that run the built device (dist/): one build before them (test/helpers/global-setup.ts). */
const builtDevice = { globalSetup: ['test/helpers/global-setup.ts'], setupFiles: ['test/helpers/cpu-log.ts'] }

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // What a poll waits for comes from a device or a page refreshing every few seconds: give it
    // several refreshes, not vitest's default of one second.
    expect: { poll: { timeout: 15_000 } },
    maxWorkers: MAX_WORKERS,
    sequence: { sequencer: (await import('./test/helpers/sequencer.ts')).LongestFirst },
    reporters: ['default'],
    projects: [
      // No device, no child process (test/helpers/unit-setup.ts refuses one). Nothing of one file
      // outlives it, so they share their workers' modules (half the time of a fresh import each).
      project('unit', { sequence: { groupOrder: 1 }, setupFiles: ['test/helpers/unit-setup.ts'], isolate: false }),
      // The built runtime, its sidecar and the tools it runs (ffmpeg, mosquitto, …).
      project('integration', { ...builtDevice, sequence: { groupOrder: 1 } }),
      // The console in Chromium, driven by playwright-core.
      project('browser', { ...builtDevice, sequence: { groupOrder: 1 } }),
      // Real-time footage through RTSP cameras, the release executable, upgrades, fleets, backup and restore.
      project('e2e', { ...builtDevice, maxWorkers: E2E_WORKERS, sequence: { groupOrder: 0 } }),
    ],
  },
})
