import { createWriteStream } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import yauzl from 'yauzl'
import { Budget, CLIMBING, corrupt, insidePath, Violation, type ArchiveRules } from './rules.ts'

// ── zip (yauzl: names are checked by the library too, sizes validated while reading) ──

/** zip entries carry links as mode bits with the target as content: always refused. */
export async function unpackZip(file: string, dest: string, rules: ArchiveRules): Promise<void> {
  const budget = new Budget(rules.limits)
  let zip: yauzl.ZipFile
  try {
    zip = await yauzl.openPromise(file, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true })
  } catch (error) {
    throw rules.refusal(corrupt('unreadable zip', error))
  }
  try {
    for await (const entry of zip.eachEntry()) {
      budget.entry()
      const name = entry.fileName
      if (rules.skip?.test(name)) continue
      const inside = insidePath(name)
      if (!inside || inside === '.') throw new Violation({ kind: 'unsafe-path', entry: name, reason: CLIMBING })
      if (name.endsWith('/')) { await mkdir(path.join(dest, inside), { recursive: true }); continue }
      const mode = (entry.externalFileAttributes >>> 16) & 0o170000
      if (mode !== 0 && mode !== 0o100000) throw new Violation({ kind: 'entry-type', entry: inside, type: `mode 0${mode.toString(8)}`, reason: 'not a regular file (link or device)' })
      budget.add(entry.uncompressedSize)
      const target = path.join(dest, inside)
      await mkdir(path.dirname(target), { recursive: true })
      await pipeline(await zip.openReadStreamPromise(entry), countBytes(budget, entry.uncompressedSize), createWriteStream(target, { flags: 'wx' }))
    }
  } catch (error) {
    if (error instanceof Violation) throw rules.refusal(error.violation)
    const message = (error as Error).message ?? String(error)
    // yauzl refuses unsafe names itself ("absolute path", "invalid relative path", "invalid characters in fileName").
    if (/path|fileName/i.test(message)) throw rules.refusal({ kind: 'unsafe-path', entry: message.replace(/^.*?: /, ''), reason: message.split(':')[0]! })
    throw rules.refusal(corrupt('corrupt zip', error))
  } finally {
    zip.close()
  }
}

/** Passes bytes through, charging them to the budget (the header's size may lie). */
function countBytes(budget: Budget, declared: number): Transform {
  let seen = 0
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length
      try {
        if (seen > declared) budget.add(Math.min(chunk.length, seen - declared))
        done(null, chunk)
      } catch (error) {
        done(error as Error)
      }
    },
  })
}
