import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Db } from '../db/client.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { Identity, Logger } from '../../shared/handler.ts'
import type { UploadService } from '../../shared/uploads/index.ts'
import { LOGO_ROUTE, LOGO_UPLOAD_PURPOSE, type LogoInfo, type LogoService } from '../../shared/system/types.ts'
import { loadSharp } from '../load-sharp.ts'
import { storedSetting } from './stored-setting.ts'
import { sanitizeSvg, SvgRefused } from './svg-sanitize.ts'

/** The shipped logo, shown until one is uploaded and after a reset. */
export const DEFAULT_LOGO = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" width="32" height="32"><rect width="32" height="32" rx="6" fill="#14263f"/><circle cx="16" cy="16" r="7" fill="none" stroke="#dbe7ff" stroke-width="3"/><circle cx="16" cy="16" r="2.5" fill="#f0a500"/></svg>')
/** A logo is a small picture: larger sides are refused rather than scaled (the operator picks the artwork). */
export const LOGO_MAX_SIDE = 4096

type Stored = Omit<LogoInfo, 'custom' | 'url'> & { file: string }

const invalid = (reason: string) => new ApiError('LogoInvalid', { details: { reason }, msgText: `The logo was refused: ${reason}` })

/** PNG, JPEG or SVG by content, not by the file's name. */
function kindOf(bytes: Buffer): LogoInfo['contentType'] | null {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png'
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg'
  const head = bytes.subarray(0, 4096).toString('utf8').replace(/^\uFEFF/, '').replace(/<\?xml[^>]*\?>|<!--[\s\S]*?-->/g, '').trimStart()
  return head.startsWith('<svg') || head.startsWith('<!DOCTYPE') ? 'image/svg+xml' : null
}

/**
 * `ctx.logo` (spec 4.10 System "logo"): the uploaded logo under `<DATA_DIR>/system/` with its
 * facts in `system_settings`; PNG and JPEG kept as they are (checked by decoding their header),
 * SVG sanitised (svg-sanitize.ts) and then rendered once to prove it draws.
 */
export class StoredLogo implements LogoService {
  readonly #stored: ReturnType<typeof storedSetting<Stored>>

  constructor(private readonly options: { db: Db; dataPath: string; now: () => number; log: Logger; uploads: UploadService; maxBytes: number }) {
    this.#stored = storedSetting<Stored>(options.db, 'system.logo', options.now)
  }

  get #dir() {
    return path.join(this.options.dataPath, 'system')
  }

  async info(): Promise<LogoInfo> {
    const stored = await this.#stored.read()
    if (stored) {
      const { file: _file, ...facts } = stored
      return { custom: true, ...facts, url: LOGO_ROUTE }
    }
    return { custom: false, contentType: 'image/svg+xml', width: 32, height: 32, sizeBytes: DEFAULT_LOGO.length, updatedAt: null, url: LOGO_ROUTE }
  }

  async set(uploadId: string, identity: Identity): Promise<LogoInfo & { removed: string[] }> {
    const lease = await this.options.uploads.lease(uploadId, identity, LOGO_UPLOAD_PURPOSE)
    try {
      if (lease.size > this.options.maxBytes) throw invalid(`the file is larger than ${this.options.maxBytes} bytes (LOGO_MAX_BYTES)`)
      let bytes = await readFile(lease.path)
      const contentType = kindOf(bytes)
      if (!contentType) throw invalid('not a PNG, JPEG or SVG image')
      let removed: string[] = []
      if (contentType === 'image/svg+xml') {
        try {
          const sanitized = sanitizeSvg(bytes.toString('utf8'))
          bytes = Buffer.from(sanitized.svg)
          removed = sanitized.removed
        } catch (error) {
          if (error instanceof SvgRefused) throw invalid(`SVG refused: ${error.message}`)
          throw error
        }
      }
      const sharp = await loadSharp()
      const meta = await sharp(bytes, { limitInputPixels: LOGO_MAX_SIDE * LOGO_MAX_SIDE }).metadata().catch(() => null)
      const expected = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/svg+xml': 'svg' }[contentType]
      if (!meta || meta.format !== expected || !meta.width || !meta.height) throw invalid(`the ${expected.toUpperCase()} image cannot be read`)
      if (meta.width > LOGO_MAX_SIDE || meta.height > LOGO_MAX_SIDE) throw invalid(`the image is ${meta.width}x${meta.height}; at most ${LOGO_MAX_SIDE} pixels a side`)
      // An SVG that parses but does not draw is refused here, before it replaces the logo.
      if (contentType === 'image/svg+xml') await sharp(bytes).resize(64, 64, { fit: 'inside' }).png().toBuffer().catch(() => { throw invalid('the SVG does not render') })
      await mkdir(this.#dir, { recursive: true })
      const file = `logo-${this.options.now()}.${expected}`
      await writeFile(path.join(this.#dir, `${file}.partial`), bytes)
      await rename(path.join(this.#dir, `${file}.partial`), path.join(this.#dir, file))
      const previous = await this.#stored.read()
      await this.#stored.write({ contentType, width: meta.width, height: meta.height, sizeBytes: bytes.length, updatedAt: this.options.now(), file })
      if (previous && previous.file !== file) await rm(path.join(this.#dir, previous.file), { force: true })
      await lease.commit()
      this.options.log.info({ contentType, width: meta.width, height: meta.height, removed }, 'logo uploaded')
      return { ...(await this.info()), removed }
    } catch (error) {
      await lease.abandon()
      throw error
    }
  }

  async reset(): Promise<LogoInfo> {
    const previous = await this.#stored.read()
    await this.#stored.remove()
    if (previous) await rm(path.join(this.#dir, previous.file), { force: true })
    return this.info()
  }

  async image() {
    const stored = await this.#stored.read()
    if (stored) {
      const bytes = await readFile(path.join(this.#dir, stored.file)).catch(() => null)
      if (bytes) return { bytes, contentType: stored.contentType, updatedAt: stored.updatedAt }
    }
    return { bytes: DEFAULT_LOGO, contentType: 'image/svg+xml' as const, updatedAt: null }
  }
}
