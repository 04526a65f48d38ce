import { setPriority } from 'node:os'

// TEST_NICENESS (a project's `env`, vitest.config.ts): the worker's niceness, which the devices,
// sidecars, ffmpeg and browsers it starts inherit. Files that wait on real-time footage keep 0;
// the files beside them run at a lower priority, on the CPU those leave idle
// (docs/developing.md "Tests"). Lowering it back needs root: a worker reused without it keeps its own.
try {
  setPriority(Number(process.env.TEST_NICENESS ?? 0))
} catch {
  // not allowed here (an unprivileged user lowering the niceness): keep the worker's own
}
