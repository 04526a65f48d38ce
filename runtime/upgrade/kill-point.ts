import { readFileSync } from 'node:fs'

/**
 * TEST ONLY (docs/configuration.md `UPGRADE_TEST_KILL_AT`): the steps of an upgrade at which
 * the setting makes the process SIGKILL its whole process group, as a power cut would. The
 * reliability suite and the rollback tests use it to prove every step crash-safe.
 *
 * Device side: `stage` (package extracted into upgrade/staging, not yet recorded), `staged`
 * (pending record written, before the restart). Supervisor side: `verify` (MD5 and archive
 * checked), `extract` (release extracted into releases/<v>.installing and flushed), `switch`
 * (release moved into releases/<v>, the current-version pointer not yet switched), `switched`
 * (pointer switched, staging not yet cleaned), `first-start` (the new version spawned, on
 * probation), `rollback` (previous version restored in the record, the failed release not
 * yet deleted).
 */
export const KILL_POINTS = ['stage', 'staged', 'verify', 'extract', 'switch', 'switched', 'first-start', 'rollback'] as const
export type KillPoint = typeof KILL_POINTS[number]

/** The process group of this process, from /proc/self/stat (the field after the command name). */
export function processGroup(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[2])
  } catch {
    return null
  }
}

/**
 * SIGKILLs the process group when `killAt` names `step`. Only a group led by a supervisor is
 * killed (`groupLeader`: the supervisor's pid; the supervisor refuses the setting unless it
 * leads its group), never a group this process merely shares with whoever started it.
 */
export function killPoint(step: KillPoint, killAt: string, groupLeader: number | null) {
  if (killAt !== step || groupLeader === null) return
  if (processGroup() !== groupLeader) return
  process.stdout.write(`${JSON.stringify({ level: 50, time: Date.now(), pid: process.pid, msg: 'test kill point reached: SIGKILL of the process group', step })}\n`)
  process.kill(-groupLeader, 'SIGKILL')
}
