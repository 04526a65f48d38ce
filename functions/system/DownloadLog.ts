import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { rangedFileResponse } from '../../shared/http/ranged-file.ts'

/**
 * A log file's name as QueryLogFiles lists it (`device.<n>.log`, runtime/logs/query.ts): letters,
 * digits and '-' between the dots, so no path and no other file can be named.
 */
const LOG_NAME = /^device\.(?:[0-9A-Za-z-]{1,40}\.){1,2}log$/
const PARAMETERS = ['name', 'id']

/** A file route answers its refusals with an HTTP error status too, so that a download never saves an envelope as the file (docs/system.md "Logs"). */
const malformed = (field: string, reason: string) =>
  new ApiError('InvalidParam', { httpStatus: 400, details: { field, reason }, msgText: `Invalid field ${field}: ${reason}` })

export default defineHandler({
  routes: ['/gtw/cwai/System/DownloadLog'],
  auth: 'session',
  body: 'none',
  methods: ['GET'],
  summary: 'Downloads one log file (JSON lines), by default the active one; single Range supported, so a download can resume (spec 4.10 System, 4.11). `name` (or its alias `id`) is a name QueryLogFiles lists: a malformed one or an unknown parameter is InvalidParam (HTTP 400), one not listed LogFileNotFound (404).',
  // Checked by the handler (not the schema) for the 400 status; the query is strings only.
  input: Type.Object({
    name: Type.Optional(Type.String({ description: 'A name from QueryLogFiles, e.g. device.3.log.' })),
    id: Type.Optional(Type.String({ description: 'The same as `name`.' })),
  }),
  async handle(input: Record<string, string | undefined>, ctx) {
    // A parameter the route does not know is refused, not ignored.
    const unknown = Object.keys(input).find((key) => !PARAMETERS.includes(key))
    if (unknown !== undefined) throw malformed(`/${unknown}`, 'is not a parameter of DownloadLog; give `name` (or `id`), a name from QueryLogFiles')
    for (const key of PARAMETERS) {
      const value = input[key]
      if (value !== undefined && !LOG_NAME.test(value)) throw malformed(`/${key}`, 'is not a log file name such as device.1.log; QueryLogFiles lists them')
    }
    if (input.name !== undefined && input.id !== undefined && input.name !== input.id) throw malformed('/id', 'names another file than `name`; give one of them')
    const name = input.name ?? input.id
    const file = ctx.debug.logFile(name)
    try {
      return await rangedFileResponse(ctx.request, file, { contentType: 'application/x-ndjson' })
    } catch (error) {
      // Listed a moment ago, rotated away since.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ApiError('LogFileNotFound', { details: { name: name ?? null } })
      throw error
    }
  },
})
