import { RecommendedAction as A } from '../actions.ts'
import { entry, type CatalogueEntry } from '../entry.ts'

/** Recording and live view (spec 4.10 System: recording, Live stream; 4.11 file streaming). Part of the error catalogue (shared/errors/catalogue.ts). */
export const RECORDING_ERRORS = {
  StreamSourceUnsupported: entry('7621', 'api.error.StreamSourceUnsupported',
    'Recording and live view copy the camera\'s video stream without re-encoding it; this camera\'s source type (HTTP snapshot or MJPEG, USB) has no such stream. Use an RTSP or file camera.', A.CHANGE_CAMERA_ENCODING),
  ClipNotFound: entry('7622', 'api.error.ClipNotFound',
    'No recorded clip with this id exists (it was never made, or retention deleted it).', A.NONE, { httpStatus: 404 }),
  ClipNotReady: entry('7623', 'api.error.ClipNotReady',
    'The clip of this alarm is still being recorded (its post-roll is not written yet); it can be played after the suggested wait.', A.RETRY_LATER, { httpStatus: 503, retryable: true, retryAfterSeconds: 5 }),
  LiveSessionNotFound: entry('7631', 'api.error.LiveSessionNotFound',
    'No live view session with this id is open: it was stopped, or it ended without keep-alive (see details.reason). Request a new one.', A.CHECK_REQUEST_PARAMETERS),
  LiveViewerLimit: entry('7632', 'api.error.LiveViewerLimit',
    'The camera already has as many live viewers as allowed (details.limit, scope camera or device); stop a session or wait until one ends.', A.RETRY_LATER, { httpStatus: 429, retryable: true, retryAfterSeconds: 10 }),
  LiveCodecUnsupported: entry('7633', 'api.error.LiveCodecUnsupported',
    'The camera sends a codec that browsers cannot play without re-encoding (details.codec); live view needs H.264. Change the camera\'s encoding.', A.CHANGE_CAMERA_ENCODING),
  LiveStreamUnavailable: entry('7634', 'api.error.LiveStreamUnavailable',
    'The camera\'s live stream could not be read (details.reason): the camera is offline or its stream failed. Retry after the suggested wait.', A.RETRY_LATER, { httpStatus: 503, retryable: true, retryAfterSeconds: 5 }),
  StreamTokenLimit: entry('7641', 'api.error.StreamTokenLimit',
    'Too many playback links are outstanding (details.limit); retry once some expire.', A.RETRY_LATER, { httpStatus: 503, retryable: true, retryAfterSeconds: 30 }),
} satisfies Record<string, CatalogueEntry>
