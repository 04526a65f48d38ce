import { TASK_ERRORS } from './areas/tasks.ts'
import { TRANSFER_LIMIT_ERRORS } from './areas/transfer-limits.ts'
import { UPLOAD_ERRORS } from './areas/uploads.ts'
import { AUTH_ERRORS } from './areas/auth.ts'
import { MODEL_ERRORS } from './areas/models.ts'
import { ALGORITHM_ERRORS } from './areas/algorithms.ts'
import { NETWORK_ERRORS } from './areas/network.ts'
import { BACKUP_ERRORS } from './areas/backup.ts'
import { CAMERA_ERRORS } from './areas/cameras.ts'
import { GALLERY_ERRORS } from './areas/galleries.ts'
import { AUDIO_ERRORS } from './areas/audio.ts'
import { SYSTEM_ERRORS } from './areas/system.ts'
import { RECORDING_ERRORS } from './areas/recording.ts'
import { INFERENCE_ERRORS } from './areas/inference.ts'
import { EVENT_ERRORS } from './areas/events.ts'
import { SCHEDULE_AND_ALARM_ERRORS } from './areas/schedules-and-alarms.ts'
import { RUNTIME_ERRORS } from './areas/runtime.ts'

/**
 * The error catalogue: every failure a client can see, as data.
 *
 * - `messageKey` is what clients branch on (spec 2.7, 7). Spec 7.1 identifiers of the form
 *   `api.error.X` are used as the key verbatim; the upper-case transfer identifiers keep
 *   their name as `msgCode` and get the camel-case key the spec gives for
 *   IMAGE_INPUT_TOO_LARGE (`api.error.imageInputTooLarge`).
 * - `msgCode` of ordinary business errors is a numeric compatibility code (spec 2.7).
 * - `httpStatus`: spec 7.1 fixes 401, 413 and 416; a business error with resCode 0 is
 *   otherwise answered with 200 (the envelope's resCode decides success, spec 2.1), except
 *   where a generic HTTP client benefits from a distinct status (404 route, 500 internal).
 *
 * One file per area in `shared/errors/areas/`; this is the one catalogue assembled from them.
 * An id is in one area only: a spread would keep the last of two silently, so `NoSharedId`
 * makes a second one a compile error.
 */
const AREAS = [
  TASK_ERRORS, TRANSFER_LIMIT_ERRORS, UPLOAD_ERRORS, AUTH_ERRORS, MODEL_ERRORS, ALGORITHM_ERRORS, NETWORK_ERRORS, BACKUP_ERRORS, CAMERA_ERRORS,
  GALLERY_ERRORS, AUDIO_ERRORS, SYSTEM_ERRORS, RECORDING_ERRORS, INFERENCE_ERRORS, EVENT_ERRORS, SCHEDULE_AND_ALARM_ERRORS, RUNTIME_ERRORS,
] as const
type KeysOfAny<U> = U extends unknown ? keyof U : never
type SharedIds<T extends readonly unknown[]> = T extends readonly [infer H, ...infer R] ? (keyof H & KeysOfAny<R[number]>) | SharedIds<R> : never
type Assembled<U> = (U extends unknown ? (area: U) => void : never) extends (area: infer I) => void ? I : never
/** Compile-time only: names an id that two areas define. */
type NoSharedId = [SharedIds<typeof AREAS>] extends [never] ? true : { sharedIds: SharedIds<typeof AREAS> }
const noSharedId: NoSharedId = true
void noSharedId

/** Every area's errors, in the order of `AREAS`. */
export const catalogue: Assembled<(typeof AREAS)[number]> = Object.assign({}, ...AREAS)

export type ErrorId = keyof typeof catalogue
export type { CatalogueEntry } from './entry.ts'
