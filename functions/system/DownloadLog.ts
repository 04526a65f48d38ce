import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { rangedFileResponse } from '../../shared/http/ranged-file.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/DownloadLog'],
  auth: 'session',
  body: 'none',
  methods: ['GET'],
  summary: 'Downloads one log file (JSON lines), by default the active one; single Range supported, so a download can resume (spec 4.10 System, 4.11). LogFileNotFound.',
  input: Type.Object({ name: Type.Optional(Type.String({ pattern: '^device\\.[0-9A-Za-z.-]{1,40}\\.log$', description: 'A name from QueryLogFiles.' })) }),
  async handle(input, ctx) {
    const file = ctx.debug.logFile(input.name)
    try {
      return await rangedFileResponse(ctx.request, file, { contentType: 'application/x-ndjson' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ApiError('LogFileNotFound', { details: { name: input.name ?? null } })
      throw error
    }
  },
})
