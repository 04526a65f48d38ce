import { mkdir, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from '../../shared/handler.ts'
import type { RecordingStore } from './store.ts'

/** At start: rings and unfinished joins of the previous run, clip files without a row and rows without a file. */
export async function removeLeftovers(dir: string, dataPath: string, store: RecordingStore, log: Logger): Promise<void> {
  await mkdir(dir, { recursive: true })
  const known = new Map((await store.all()).map((row) => [path.join(dataPath, row.file), row.clipId]))
  const found = new Set<string>()
  for (const cameraId of await readdir(dir)) {
    const cameraDir = path.join(dir, cameraId)
    await rm(path.join(cameraDir, 'ring'), { recursive: true, force: true })
    for (const name of await readdir(cameraDir).catch(() => [] as string[])) {
      const file = path.join(cameraDir, name)
      if (known.has(file)) found.add(file)
      else await rm(file, { recursive: true, force: true })
    }
  }
  const missing = [...known].filter(([file]) => !found.has(file)).map(([, clipId]) => clipId)
  await store.deleteClips(missing)
  if (missing.length > 0) log.warn({ clips: missing.length }, 'removed clips whose files were gone')
}
