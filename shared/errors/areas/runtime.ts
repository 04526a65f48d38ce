import { RecommendedAction as A } from '../actions.ts'
import { entry, type CatalogueEntry } from '../entry.ts'

/** The runtime: routes, methods, media types, start-up and shutdown, storage, internal errors (spec 2.1, 7). Part of the error catalogue (shared/errors/catalogue.ts). */
export const RUNTIME_ERRORS = {
  RouteNotFound: entry('404', 'api.error.RouteNotFound',
    'No endpoint is mounted at this path.', A.CHECK_REQUEST_PARAMETERS, { httpStatus: 404 }),
  MethodNotAllowed: entry('405', 'api.error.MethodNotAllowed',
    'This endpoint does not accept that HTTP method.', A.CHECK_REQUEST_PARAMETERS, { httpStatus: 405 }),
  UnsupportedMediaType: entry('415', 'api.error.UnsupportedMediaType',
    'The Content-Type of the request does not match what this endpoint accepts.', A.CHECK_REQUEST_PARAMETERS, { httpStatus: 415 }),
  NotSupported: entry('1010', 'api.error.NotSupported',
    'This operation is not supported on this device.', A.NONE),
  ServiceUnavailable: entry('503', 'api.error.ServiceUnavailable',
    'The device is starting or shutting down.', A.RETRY_LATER, { httpStatus: 503, retryable: true, retryAfterSeconds: 2 }),
  // A write failed because the device's storage is full (SQLite's SQLITE_FULL, ENOSPC): not a
  // fault of the request, and it succeeds once space is freed (errors/internal.ts maps it).
  StorageFull: entry('507', 'api.error.StorageFull',
    'The device\'s storage is full: the request could not be saved. Free disk space (old uploads, exports, logs), then try again.', A.FREE_DISK_SPACE, { httpStatus: 507, retryable: true, retryAfterSeconds: 30 }),
  // Not retryable: an unexpected failure is presumed deterministic; the runtime marks it
  // retryable (RETRY_LATER) only when its cause is known to be transient (errors/internal.ts).
  Internal: entry('500', 'api.error.Internal',
    'Internal error; quote the request id when reporting it.', A.NONE, { httpStatus: 500 }),
} satisfies Record<string, CatalogueEntry>
