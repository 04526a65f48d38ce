/**
 * Recommended-action codes (spec 7.2), plus a few for situations 7.2 does not cover
 * (sign-in, request shape, task lifecycle). Clients branch on these, never on msgText.
 */
export const RecommendedAction = {
  // spec 7.2
  FREE_DISK_SPACE: 'FREE_DISK_SPACE',
  USE_CHUNKED_UPLOAD: 'USE_CHUNKED_UPLOAD',
  REDUCE_REQUEST_BODY: 'REDUCE_REQUEST_BODY',
  USE_LARGER_CHUNKS: 'USE_LARGER_CHUNKS',
  RETRY: 'RETRY',
  RETRY_LATER: 'RETRY_LATER',
  RESIZE_IMAGE: 'RESIZE_IMAGE',
  RESIZE_OR_RECOMPRESS_IMAGE: 'RESIZE_OR_RECOMPRESS_IMAGE',
  CHECK_UPLOAD_PARAMETERS: 'CHECK_UPLOAD_PARAMETERS',
  CHANGE_DEPLOYMENT_POLICY: 'CHANGE_DEPLOYMENT_POLICY',
  USE_LARGER_CHUNKS_OR_CHANGE_POLICY: 'USE_LARGER_CHUNKS_OR_CHANGE_POLICY',
  // device-specific additions
  SIGN_IN_AGAIN: 'SIGN_IN_AGAIN',
  CHANGE_PASSWORD: 'CHANGE_PASSWORD',
  CHECK_REQUEST_PARAMETERS: 'CHECK_REQUEST_PARAMETERS',
  CREATE_TASK: 'CREATE_TASK',
  QUERY_ALGORITHMS: 'QUERY_ALGORITHMS',
  CHECK_MODEL_STATUS: 'CHECK_MODEL_STATUS',
  RE_ENCODE_IMAGE: 'RE_ENCODE_IMAGE',
  CHECK_IMAGE_URL: 'CHECK_IMAGE_URL',
  START_NEW_UPLOAD: 'START_NEW_UPLOAD',
  CHECK_CAMERA_SOURCE: 'CHECK_CAMERA_SOURCE',
  CHECK_CAMERA_NETWORK: 'CHECK_CAMERA_NETWORK',
  CHECK_CAMERA_CREDENTIALS: 'CHECK_CAMERA_CREDENTIALS',
  CHANGE_CAMERA_ENCODING: 'CHANGE_CAMERA_ENCODING',
  CONFIRM_AT_NEW_ADDRESS: 'CONFIRM_AT_NEW_ADDRESS',
  /** A gallery picture with not exactly one face (or person): a photo of one, or a crop from a detection. */
  USE_ONE_SUBJECT_PHOTO: 'USE_ONE_SUBJECT_PHOTO',
  /** A gallery face too small, too blurred or turned too far (details.measured against details.limit): a larger, sharper, frontal photo. */
  USE_BETTER_FACE_PHOTO: 'USE_BETTER_FACE_PHOTO',
  /** A stream task's targetFps above its camera's rate (details.sourceFps). */
  LOWER_TARGET_FPS: 'LOWER_TARGET_FPS',
  NONE: 'NONE',
} as const

export type RecommendedAction = (typeof RecommendedAction)[keyof typeof RecommendedAction]
