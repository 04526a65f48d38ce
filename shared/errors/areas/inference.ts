import { RecommendedAction as A } from '../actions.ts'
import { entry, type CatalogueEntry } from '../entry.ts'

/** Inference sidecar and tasks (spec 3.2, 4.7). Part of the error catalogue (shared/errors/catalogue.ts). */
export const INFERENCE_ERRORS = {
  SidecarUnavailable: entry('1101', 'api.error.SidecarUnavailable',
    'The inference engine is restarting; the request did not complete.', A.RETRY,
    { httpStatus: 503, retryable: true, retryAfterSeconds: 1 }),
  TaskBusy: entry('1102', 'api.error.TaskBusy',
    'An inference is still running on this task; cancel it when the detection has finished.', A.RETRY_LATER,
    { retryable: true, retryAfterSeconds: 1 }),
  InferenceDeadlineExceeded: entry('1103', 'api.error.InferenceDeadlineExceeded',
    'The detection did not finish within its deadline.', A.RETRY_LATER, { retryable: true, retryAfterSeconds: 1 }),
  PictureNotFound: entry('1104', 'api.error.PictureNotFound',
    'The detection picture does not exist or has expired.', A.NONE, { httpStatus: 404 }),
  // spec 4.11, 2.7: decode memory admission; retryAfterSeconds follows how long detections hold memory.
  ImageMemoryBusy: entry('1105', 'api.error.ImageMemoryBusy',
    'Other images are using the memory set aside for decoding; the image was not decoded. Retry after the suggested wait.', A.RETRY_LATER,
    { httpStatus: 503, retryable: true, retryAfterSeconds: 1 }),
} satisfies Record<string, CatalogueEntry>
