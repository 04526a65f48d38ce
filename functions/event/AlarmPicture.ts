import { Type } from '@sinclair/typebox'
import { ALARM_ID, ALARM_PICTURE_ROUTE } from '../../shared/alarms/types.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { defineHandler } from '../../shared/handler.ts'
import { rangedFileResponse } from '../../shared/http/ranged-file.ts'

export default defineHandler({
  routes: [ALARM_PICTURE_ROUTE],
  auth: 'session',
  body: 'none',
  methods: ['GET'],
  summary: 'The snapshot of an alarm (alarm.raised snapshotUrl): the frame with its objects boxed, JPEG, single Range supported (spec 4.11); kept as long as the event. AlarmPictureNotFound.',
  input: Type.Object({ id: Type.String({ pattern: ALARM_ID.source, description: 'The alarmId.' }) }),
  async handle(input, ctx) {
    const file = await ctx.alarms.picture(input.id)
    try {
      return await rangedFileResponse(ctx.request, file, { downloadName: `alarm-${input.id}.jpg`, disposition: 'inline', contentType: 'image/jpeg', cacheControl: 'private, max-age=3600' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ApiError('AlarmPictureNotFound', { details: { id: input.id } })
      throw error
    }
  },
})
