import { RecommendedAction as A } from '../actions.ts'
import { entry, type CatalogueEntry } from '../entry.ts'

/** Schedules and alarm policies (spec 4.10 Schedule, Linkage / alarm policy). Part of the error catalogue (shared/errors/catalogue.ts). */
export const SCHEDULE_AND_ALARM_ERRORS = {
  ScheduleNotFound: entry('7601', 'api.error.ScheduleNotFound',
    'No schedule with this scheduleId exists.', A.CHECK_REQUEST_PARAMETERS),
  ScheduleNameExists: entry('7602', 'api.error.ScheduleNameExists',
    'Another schedule already has this name.', A.CHECK_REQUEST_PARAMETERS),
  ScheduleInUse: entry('7603', 'api.error.ScheduleInUse',
    'Stream tasks or alarm policies use this schedule (details.taskIds, details.policies): change them first.', A.NONE),
  AlarmPolicyNotFound: entry('7611', 'api.error.AlarmPolicyNotFound',
    'No alarm policy with this policyId exists.', A.CHECK_REQUEST_PARAMETERS),
  AlarmPolicyNameExists: entry('7612', 'api.error.AlarmPolicyNameExists',
    'Another alarm policy already has this name.', A.CHECK_REQUEST_PARAMETERS),
  AlarmActionUnavailable: entry('7613', 'api.error.AlarmActionUnavailable',
    'This device cannot take one of the policy\'s actions (details.index, details.reason); nothing was saved.', A.CHECK_REQUEST_PARAMETERS),
  AlarmPictureNotFound: entry('7614', 'api.error.AlarmPictureNotFound',
    'The alarm has no stored picture (none was taken, or it was removed with the old events).', A.NONE, { httpStatus: 404 }),
  AlarmConditionUnavailable: entry('7615', 'api.error.AlarmConditionUnavailable',
    'A condition of the policy can never be met on its task (details.field, details.reason: the task does not recognize faces); nothing was saved.', A.CHECK_REQUEST_PARAMETERS),
  UnknownRegion: entry('7616', 'api.error.UnknownRegion',
    'The policy\'s region (details.areaId) is not one the watched stream tasks define (details.knownAreaIds): it could never fire; nothing was saved.', A.CHECK_REQUEST_PARAMETERS),
  RegionInUse: entry('7617', 'api.error.RegionInUse',
    'Alarm policies watch regions this change of the stream task removes (details.areaIds, details.policies): they could never fire again; change or delete them first. Nothing was changed.', A.NONE),
} satisfies Record<string, CatalogueEntry>
