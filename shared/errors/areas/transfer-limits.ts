import { RecommendedAction as A } from '../actions.ts'
import { entry, type CatalogueEntry } from '../entry.ts'

/** spec 7.1: media and transfer limits. Part of the error catalogue (shared/errors/catalogue.ts). */
export const TRANSFER_LIMIT_ERRORS = {
  IMAGE_INPUT_TOO_LARGE: entry('IMAGE_INPUT_TOO_LARGE', 'api.error.imageInputTooLarge',
    'The encoded image exceeds the input limit.', A.RESIZE_OR_RECOMPRESS_IMAGE),
  IMAGE_RESOLUTION_TOO_LARGE: entry('IMAGE_RESOLUTION_TOO_LARGE', 'api.error.imageResolutionTooLarge',
    'The decoded pixel count exceeds the limit.', A.RESIZE_IMAGE),
  STORAGE_RESERVE_REACHED: entry('STORAGE_RESERVE_REACHED', 'api.error.storageReserveReached',
    'Not enough safe disk space for this upload.', A.FREE_DISK_SPACE),
  TRANSFER_BUSY: entry('TRANSFER_BUSY', 'api.error.transferBusy',
    'Another transfer is writing to this upload session.', A.RETRY_LATER, { retryable: true, retryAfterSeconds: 1 }),
  UPLOAD_METADATA_BUDGET: entry('UPLOAD_METADATA_BUDGET', 'api.error.uploadMetadataBudget',
    'The per-session metadata budget is exceeded.', A.USE_LARGER_CHUNKS_OR_CHANGE_POLICY),
  HTTP_HEADERS_TOO_LARGE: entry('HTTP_HEADERS_TOO_LARGE', 'api.error.httpHeadersTooLarge',
    'The URL and headers of the request are larger than the device reads (details.limitBytes).', A.CHECK_REQUEST_PARAMETERS, { httpStatus: 431 }),
  HTTP_BODY_TOO_LARGE: entry('HTTP_BODY_TOO_LARGE', 'api.error.httpBodyTooLarge',
    'The request body is larger than this request type allows.', A.REDUCE_REQUEST_BODY, { httpStatus: 413 }),
  DefaultCantBeExport: entry('DefaultCantBeExport', 'api.error.DefaultCantBeExport',
    'Preset, encrypted or device-bound models cannot be exported.', A.NONE),
  RangeNotSatisfiable: entry('RANGE_NOT_SATISFIABLE', 'api.error.rangeNotSatisfiable',
    'The requested byte range is outside the file.', A.CHECK_REQUEST_PARAMETERS, { httpStatus: 416 }),
} satisfies Record<string, CatalogueEntry>
