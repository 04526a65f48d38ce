import { defineConfig } from 'vitest/config'
import type { TestProjectInlineConfiguration } from 'vitest/config'
import { LANES, LongestFirst } from './test/helpers/sequencer.ts'

/**
 * The suite's four projects, each file named by its own (`*.unit.test.ts`, …): docs/developing.md,
 * "Tests". Two groups, one after the other (`sequence.groupOrder`), longest files first in each
 * (test/helpers/sequencer.ts, by the committed test/durations.json):
 * - the e2e files, which spend most of their time waiting on real-time footage, restarts and
 *   upgrades, 4 at once, and beside them the integration files 2 at once at a lower CPU
 *   priority (test/helpers/process-priority.ts), on the cores the e2e files leave idle;
 * - then the browser files 3 at once, and beside them the unit files one at a time at the lower
 *   priority, on what the browser files leave idle.
 * Worker counts measured on the 2-core machine (bench/README.md, "Test suite"); a group's projects
 * share its workers, and the sequencer lays its queue out as `LANES` per project.
 */
const FIRST_GROUP_WORKERS = LANES.e2e + LANES.integration
const SECOND_GROUP_WORKERS = LANES.browser + LANES.unit

const project = (name: string, options: TestProjectInlineConfiguration['test'] = {}): TestProjectInlineConfiguration => ({
  extends: true,
  test: { name, include: [`test/**/*.${name}.test.ts`], ...options },
})
/** Files that run the built device (dist/): one build before them (test/helpers/global-setup.ts). */
const builtDevice = (niceness: number) => ({
  globalSetup: ['test/helpers/global-setup.ts'],
  setupFiles: ['test/helpers/process-priority.ts', 'test/helpers/cpu-log.ts'],
  env: { TEST_NICENESS: String(niceness) },
})
/** The niceness of the files that run beside the real-time ones: where both want a core, a process of theirs gets about a tenth of what one at niceness 0 gets (the kernel's weights, 110 against 1024). */
const BACKGROUND_NICENESS = 10

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // What a poll waits for comes from a device or a page refreshing every few seconds: give it
    // several refreshes, not vitest's default of one second.
    expect: { poll: { timeout: 15_000 } },
    maxWorkers: SECOND_GROUP_WORKERS,
    sequence: { sequencer: LongestFirst },
    reporters: ['default'],
    projects: [
      // No device, no child process (test/helpers/unit-setup.ts refuses one). Nothing of one file
      // outlives it, so they share their workers' modules (half the time of a fresh import each).
      project('unit', { sequence: { groupOrder: 1 }, setupFiles: ['test/helpers/process-priority.ts', 'test/helpers/unit-setup.ts'], env: { TEST_NICENESS: String(BACKGROUND_NICENESS) }, isolate: false }),
      // The built runtime, its sidecar and the tools it runs (ffmpeg, mosquitto, …).
      project('integration', { ...builtDevice(BACKGROUND_NICENESS), maxWorkers: FIRST_GROUP_WORKERS, sequence: { groupOrder: 0 } }),
      // The console in Chromium, driven by playwright-core.
      project('browser', { ...builtDevice(0), sequence: { groupOrder: 1 } }),
      // Real-time footage through RTSP cameras, the release executable, upgrades, fleets, backup and restore.
      project('e2e', { ...builtDevice(0), maxWorkers: FIRST_GROUP_WORKERS, sequence: { groupOrder: 0 } }),
    ],
  },
})
