/**
 * Run in a child process by the archive bomb tests, so the peak RSS measured is the
 * unpacking's own: unpacks one archive and prints, as JSON, how it was refused, the sizes
 * of the files it wrote and how far the peak RSS (VmHWM) rose above the child's baseline.
 * argv[2]: JSON { mode, file, dest, limits, accepted? }; `algorithm` unpacks as an
 * algorithm package, `extract` writes a tar.gz as if an inspection had accepted `accepted`.
 */
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { unpackAlgorithmPackage } from '../../runtime/algorithms/package-archive.ts'
import { extractTarGz, type ArchiveLimits, type ArchiveViolation } from '../../runtime/archive/safe-unpack.ts'
import { ApiError } from '../../shared/errors/index.ts'

interface Job { mode: 'algorithm' | 'extract'; file: string; dest: string; limits: ArchiveLimits; accepted?: string[] }

class Refused extends Error {
  constructor(readonly violation: ArchiveViolation) { super(violation.kind) }
}

const peakKb = () => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))![1])
const job = JSON.parse(process.argv[2]!) as Job
const baseline = peakKb()
let refusal: unknown = null
try {
  if (job.mode === 'algorithm') {
    await unpackAlgorithmPackage(job.file, job.dest, job.limits)
  } else {
    mkdirSync(job.dest, { recursive: true })
    const listing = { entries: 0, expandedBytes: 0, accepted: new Set(job.accepted), limits: job.limits }
    await extractTarGz(job.file, job.dest, listing, { refusal: (violation) => new Refused(violation) })
  }
} catch (error) {
  if (error instanceof ApiError) refusal = { messageKey: error.item.messageKey, details: error.item.details }
  else if (error instanceof Refused) refusal = error.violation
  else throw error
}
const written = Object.fromEntries(readdirSync(job.dest, { recursive: true, encoding: 'utf8' })
  .filter((name) => statSync(path.join(job.dest, name)).isFile())
  .map((name) => [name, statSync(path.join(job.dest, name)).size]))
console.log(JSON.stringify({ refusal, written, peakGrowthMb: Math.round((peakKb() - baseline) / 1024) }))
