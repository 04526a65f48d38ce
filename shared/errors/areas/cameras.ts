import { RecommendedAction as A } from '../actions.ts'
import { entry, type CatalogueEntry } from '../entry.ts'

/** Cameras (spec 4.10 Camera): each way a source fails has its own key. Part of the error catalogue (shared/errors/catalogue.ts). */
export const CAMERA_ERRORS = {
  CameraNotFound: entry('7401', 'api.error.CameraNotFound',
    'No camera with this cameraId exists on the device.', A.CHECK_REQUEST_PARAMETERS),
  CameraUrlInvalid: entry('7402', 'api.error.CameraUrlInvalid',
    'The camera source is not valid for its source type: see details.field and details.reason.', A.CHECK_CAMERA_SOURCE),
  CameraUnreachable: entry('7403', 'api.error.CameraUnreachable',
    'The camera host could not be reached or did not answer in time.', A.CHECK_CAMERA_NETWORK, { retryable: true, retryAfterSeconds: 5 }),
  CameraAuthFailed: entry('7404', 'api.error.CameraAuthFailed',
    'The camera refused the user name or password.', A.CHECK_CAMERA_CREDENTIALS),
  CameraStreamNotFound: entry('7405', 'api.error.CameraStreamNotFound',
    'The camera answered but has no stream at this URL path.', A.CHECK_CAMERA_SOURCE),
  CameraUnsupportedCodec: entry('7406', 'api.error.CameraUnsupportedCodec',
    'The source has no video the device can decode (unknown codec or not a video).', A.CHANGE_CAMERA_ENCODING),
  CameraSourceFailed: entry('7407', 'api.error.CameraSourceFailed',
    'The source failed while it was read: see details.reason.', A.RETRY_LATER, { retryable: true, retryAfterSeconds: 5 }),
  CameraInUse: entry('7408', 'api.error.CameraInUse',
    'Tasks analyse this camera: stop them first, or delete with force.', A.NONE),
} satisfies Record<string, CatalogueEntry>
