import { RecommendedAction as A } from '../actions.ts'
import { entry, type CatalogueEntry } from '../entry.ts'

/** spec 7.1: detection and task errors (spec 3.2, 4.7). Part of the error catalogue (shared/errors/catalogue.ts). */
export const TASK_ERRORS = {
  ActionAlgLoadFailed: entry('1001', 'api.error.ActionAlgLoadFailed',
    'The algorithm does not exist or its resources are unavailable.', A.QUERY_ALGORITHMS),
  NotCreated: entry('1002', 'api.error.NotCreated',
    'The task is not created, was cancelled, or its taskId/algorithmCode differ.', A.CREATE_TASK),
  TaskCreateFailed: entry('1003', 'api.error.TaskCreateFailed',
    'Model or pipeline initialization failed.', A.CHECK_MODEL_STATUS),
  InvalidParam: entry('1004', 'api.error.InvalidParam',
    'A request field is missing, has the wrong type or conflicts with another field.', A.CHECK_REQUEST_PARAMETERS),
  ImageDecodeFailed: entry('1005', 'api.error.ImageDecodeFailed',
    'The image is corrupt or in an unsupported format.', A.RE_ENCODE_IMAGE),
  ImageDownloadFailed: entry('1006', 'api.error.ImageDownloadFailed',
    'The device could not download the image from imageUrl.', A.CHECK_IMAGE_URL, { retryable: true }),
} satisfies Record<string, CatalogueEntry>
