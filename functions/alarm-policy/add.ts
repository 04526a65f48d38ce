import { AddPolicyInput } from '../../shared/alarms/types.ts'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/AlarmStrage/add'],
  auth: 'session',
  body: 'json',
  summary: 'Adds an alarm policy (spec 4.10 Linkage / alarm policy): conditions on a stream task\'s objects (task, camera, region, label, minimum count, minimum dwell, logic result, recognition: a watch-list person or a stranger seen) and a schedule → actions (webhook, MQTT topic, clip, audio). Every alarm is an alarm.raised event with its snapshot (and the person recognized). AlarmPolicyNameExists, NotCreated, CameraNotFound, ScheduleNotFound, AlarmConditionUnavailable (a recognition condition without a task that recognizes faces), UnknownRegion (an areaId no watched task defines: details.knownAreaIds), AlarmActionUnavailable, AudioFileNotFound, AudioColumnNotFound, InvalidParam.',
  input: AddPolicyInput,
  async handle(input, ctx) {
    return ctx.alarms.add(input, ctx.identity!)
  },
})
