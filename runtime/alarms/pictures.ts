import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { ALARM_ID, ALARM_PICTURE_ROUTE } from '../../shared/alarms/types.ts'
import { ApiError } from '../../shared/errors/index.ts'

/**
 * Alarm snapshots (spec 4.10 Linkage / alarm policy: "record the alarm with its snapshot"):
 * `<DATA_DIR>/alarms/<alarmId>.jpg`, kept as long as alarm events are (EVENT_RETENTION_MS),
 * served by ALARM_PICTURE_ROUTE and put into the alarm export.
 */
export class AlarmPictures {
  readonly dir: string
  #sweptAt = -Infinity

  constructor(dataPath: string, private readonly baseUrl: string, private readonly retentionMs: number) {
    this.dir = path.join(dataPath, 'alarms')
  }

  urlOf(alarmId: string): string {
    return `${this.baseUrl.replace(/\/+$/, '')}${ALARM_PICTURE_ROUTE}?id=${alarmId}`
  }

  fileOf(alarmId: string): string {
    if (!ALARM_ID.test(alarmId)) throw new ApiError('AlarmPictureNotFound', { details: { id: alarmId } })
    return path.join(this.dir, `${alarmId}.jpg`)
  }

  /** Keeps the picture; answers its URL. Old pictures are swept now and then (by file time: real time). */
  async save(alarmId: string, jpeg: Buffer): Promise<string> {
    const now = Date.now()
    await mkdir(this.dir, { recursive: true })
    await writeFile(this.fileOf(alarmId), jpeg)
    if (now - this.#sweptAt >= Math.min(3_600_000, this.retentionMs / 10)) {
      this.#sweptAt = now
      await this.sweep(now - this.retentionMs)
    }
    return this.urlOf(alarmId)
  }

  /** The picture's file; AlarmPictureNotFound when none was kept (or it is gone with its event). */
  async file(alarmId: string): Promise<string> {
    const file = this.fileOf(alarmId)
    if (!(await stat(file).catch(() => null))?.isFile()) throw new ApiError('AlarmPictureNotFound', { details: { id: alarmId } })
    return file
  }

  private async sweep(olderThan: number): Promise<void> {
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const file = path.join(this.dir, name)
      const info = await stat(file).catch(() => null)
      if (info && info.mtimeMs < olderThan) await rm(file, { force: true })
    }
  }
}
