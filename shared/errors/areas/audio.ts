import { RecommendedAction as A } from '../actions.ts'
import { entry, type CatalogueEntry } from '../entry.ts'

/** Audio files and columns (spec 4.10 Audio; docs/audio.md). Part of the error catalogue (shared/errors/catalogue.ts). */
export const AUDIO_ERRORS = {
  AudioFileNotFound: entry('8101', 'api.error.AudioFileNotFound',
    'No audio file with this audioId exists.', A.CHECK_REQUEST_PARAMETERS),
  AudioFileInvalid: entry('8102', 'api.error.AudioFileInvalid',
    'The upload is not an audio file the device accepts (WAV, MP3, Ogg, FLAC, AAC/M4A with an audio stream that decodes): see details.reason. The upload is kept; send another file.', A.CHECK_UPLOAD_PARAMETERS),
  AudioFileTooLong: entry('8103', 'api.error.AudioFileTooLong',
    'The audio is longer than the device accepts (details.durationMs, details.limitMs).', A.CHECK_UPLOAD_PARAMETERS),
  AudioColumnNotFound: entry('8104', 'api.error.AudioColumnNotFound',
    'No audio column with this columnId exists.', A.CHECK_REQUEST_PARAMETERS),
  AudioColumnUnreachable: entry('8105', 'api.error.AudioColumnUnreachable',
    'The audio column could not be reached or did not answer in time: see details.reason.', A.RETRY_LATER, { retryable: true, retryAfterSeconds: 5 }),
  AudioColumnAuthFailed: entry('8106', 'api.error.AudioColumnAuthFailed',
    'The audio column refused the user name or password (HTTP 401 or 403).', A.CHECK_REQUEST_PARAMETERS),
  AudioColumnRejected: entry('8107', 'api.error.AudioColumnRejected',
    'The audio column answered the push with an HTTP error: see details.status (a wrong path or format for this speaker).', A.CHECK_REQUEST_PARAMETERS),
} satisfies Record<string, CatalogueEntry>
