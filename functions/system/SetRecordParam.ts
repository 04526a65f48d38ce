import { defineHandler } from '../../shared/handler.ts'
import { SetRecordParamInput } from '../../shared/recording/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/SetRecordParam'],
  auth: 'session',
  body: 'json',
  summary: 'Sets recording (spec 4.10 System: recording): retentionDays, budgetBytes, and per camera mode off / events / continuous with preRollSeconds and postRollSeconds; stored and applied at once. CameraNotFound, StreamSourceUnsupported (HTTP and USB cameras).',
  input: SetRecordParamInput,
  handle(input, ctx) {
    return ctx.recording.setParams(input)
  },
})
