import { DeviceError, NetworkError } from '../client/errors.ts'

/**
 * Display texts for the console. Clients branch on `messageKey` and `recommendedAction`
 * (spec 7); the device's `msgText` is only a fallback for keys this table does not know.
 */
export const MESSAGE_TEXT: Record<string, string> = {
  'api.error.ActionAlgLoadFailed': 'The algorithm does not exist or its resources are unavailable.',
  'api.error.NotCreated': 'The task is not created (or was cancelled).',
  'api.error.TaskCreateFailed': 'The device could not initialize the model or pipeline.',
  'api.error.InvalidParam': 'A request field is missing or invalid.',
  'api.error.ImageDecodeFailed': 'The image is corrupt or in a format the device cannot decode.',
  'api.error.ImageDownloadFailed': 'The device could not download the image.',
  'api.error.imageInputTooLarge': 'The image file is larger than the device accepts.',
  'api.error.imageResolutionTooLarge': 'The image has more pixels than the device can decode.',
  'api.error.storageReserveReached': 'The device does not have enough safe disk space for this upload.',
  'api.error.transferBusy': 'Another transfer is writing to this upload.',
  'api.error.uploadDifferentFile': 'The device holds part of another file under this upload: start a new upload.',
  'api.error.uploadMetadataBudget': 'The upload has too many chunks for its metadata budget.',
  'api.error.httpBodyTooLarge': 'The request is larger than the device accepts for this kind of request.',
  'api.error.Unauthorized': 'Your session has ended. Sign in again.',
  'api.error.LoginFailed': 'Account or password is wrong.',
  'api.error.LoginLocked': 'Too many failed sign-ins from this address: wait before trying again.',
  'api.error.LoginBusy': 'The device is checking many sign-ins at once: try again in a moment.',
  'api.error.PasswordChangeRequired': 'The password must be changed before the device can be used.',
  'api.error.PasswordWeak': 'The device does not accept this new password.',
  'api.error.RouteNotFound': 'This device does not offer that function.',
  'api.error.ServiceUnavailable': 'The device is starting or shutting down.',
  'api.error.Internal': 'The device hit an internal error.',
  // spec 4.10: algorithm management
  'api.error.AlgorithmNotFound': 'No algorithm with this id exists on the device.',
  'api.error.AlgorithmExists': 'An algorithm with this id is installed already. Tick “Replace existing” to overwrite it.',
  'api.error.AlgorithmInUse': 'Tasks use this algorithm: cancel them before deleting or replacing it.',
  'api.error.AlgorithmInvalid': 'The pipeline layout is not valid.',
  'api.error.AlgorithmPackageInvalid': 'The file is not a valid algorithm package (a zip or tar.gz with manifest.json and its model files).',
  'api.error.AlgorithmPackageUnsafe': 'The package has an entry that would leave its folder or is not a regular file.',
  'api.error.AlgorithmPackageTooLarge': 'The package has too many entries or expands beyond the device’s size limit.',
  'api.error.DefaultCantBeExport': 'A model of this algorithm cannot be exported (preset, encrypted or device-bound).',
  'api.error.ModelFileMissing': 'A model file of this algorithm is missing on the device.',
  // spec 4.10 Camera, 4.9 stream tasks
  'api.error.CameraNotFound': 'No camera with this id exists on the device.',
  'api.error.CameraUrlInvalid': 'The camera address is not valid for its source type.',
  'api.error.CameraUnreachable': 'The camera could not be reached, or sent no picture in time.',
  'api.error.CameraAuthFailed': 'The camera refused the user name or password.',
  'api.error.CameraStreamNotFound': 'The camera answered, but has no stream at this address.',
  'api.error.CameraUnsupportedCodec': 'The source has no video the device can decode.',
  'api.error.CameraSourceFailed': 'The camera source failed while it was read.',
  'api.error.CameraInUse': 'Stream tasks analyse this camera: stop them first, or delete the camera anyway.',
  'api.error.SidecarUnavailable': 'The inference engine is restarting; the request did not complete.',
  // spec 4.10 Audio and System
  'api.error.AudioFileNotFound': 'No audio file with this id exists.',
  'api.error.AudioFileInvalid': 'The file is not audio the device accepts (WAV, MP3, Ogg, FLAC, AAC/M4A).',
  'api.error.AudioFileTooLong': 'The audio is longer than the device accepts.',
  'api.error.AudioColumnNotFound': 'No audio column with this id exists.',
  'api.error.AudioColumnUnreachable': 'The audio column could not be reached.',
  'api.error.AudioColumnAuthFailed': 'The audio column refused the user name or password.',
  'api.error.AudioColumnRejected': 'The audio column refused the audio (wrong path or format for this speaker?).',
  'api.error.TimeZoneUnknown': 'This is not a time zone name the device knows (for example Europe/Berlin).',
  'api.error.TimeServiceUnavailable': 'No time service runs on the device\'s host, so NTP servers cannot be set here.',
  'api.error.TimeChangeNotPermitted': 'The device may not change the host\'s time service.',
  'api.error.TimeServiceFailed': 'The time service did not take the NTP servers; nothing changed.',
  'api.error.LogoInvalid': 'The logo is not a PNG, JPEG or SVG the device accepts.',
  'api.error.LogFileNotFound': 'This log file no longer exists (rotated away).',
  // spec 4.10 Network
  'api.error.NetworkBackendUnavailable': 'The device found no network configuration service it can change (NetworkManager, systemd-networkd, ifupdown).',
  'api.error.NetworkChangeNotPermitted': 'The device is not permitted to change the network configuration; nothing changed.',
  'api.error.NetworkChangePending': 'Another network change waits for its confirmation: confirm or revert it first.',
  'api.error.NetworkChangeNotFound': 'This network change no longer waits for confirmation (confirmed, rolled back, or unknown).',
  'api.error.NetworkChangeFailed': 'The device could not apply the network change; the previous configuration is back.',
  'api.error.NetworkConfirmFromOldAddress': 'This console reached the device through the address the change gives up: confirm from the new address.',
  // spec 4.10 Schedule, Linkage / alarm policy
  'api.error.ScheduleNotFound': 'No schedule with this id exists.',
  'api.error.ScheduleNameExists': 'Another schedule already has this name.',
  'api.error.ScheduleInUse': 'Stream tasks or alarm policies use this schedule: change them first.',
  'api.error.AlarmPolicyNotFound': 'No alarm policy with this id exists.',
  'api.error.AlarmPolicyNameExists': 'Another alarm policy already has this name.',
  'api.error.AlarmActionUnavailable': 'This device cannot take one of the policy’s actions.',
  'api.error.AlarmPictureNotFound': 'The alarm’s picture is no longer kept.',
  'api.error.AlarmConditionUnavailable': 'A condition of the policy can never be met on its task (e.g. face recognition on a task that recognizes no faces).',
  'api.error.UnknownRegion': 'The task defines no region with this id: choose one of its regions, or draw it on the task first.',
  'api.error.RegionInUse': 'Alarm policies watch a region this change removes: change or delete those policies first (they are named above).',
}

/** spec 7.2 recommended-action codes (and the device's additions), as next steps for a person. */
export const ACTION_TEXT: Record<string, string> = {
  FREE_DISK_SPACE: 'Free disk space on the device, then try again (not immediately and not in a loop).',
  USE_CHUNKED_UPLOAD: 'Send the file as a chunked upload (smaller chunks).',
  REDUCE_REQUEST_BODY: 'Send a smaller request body.',
  USE_LARGER_CHUNKS: 'Use larger chunks (fewer of them).',
  RETRY: 'Try again.',
  RETRY_LATER: 'Try again later.',
  RESIZE_IMAGE: 'Reduce the image resolution and try again.',
  RESIZE_OR_RECOMPRESS_IMAGE: 'Resize or recompress the image (for example a smaller JPEG) and try again.',
  CHECK_UPLOAD_PARAMETERS: 'Check the upload parameters.',
  CHANGE_DEPLOYMENT_POLICY: 'Ask the administrator to change the deployment policy.',
  USE_LARGER_CHUNKS_OR_CHANGE_POLICY: 'Use larger chunks, or ask the administrator to change the policy.',
  SIGN_IN_AGAIN: 'Sign in again.',
  CHANGE_PASSWORD: 'Change the password.',
  CHECK_REQUEST_PARAMETERS: 'Check the values you entered.',
  CREATE_TASK: 'Create the task again (run the detection again).',
  QUERY_ALGORITHMS: 'Reload the algorithm list and check the model status.',
  CHECK_MODEL_STATUS: 'Check the model status and the device logs; do not retry in a loop.',
  RE_ENCODE_IMAGE: 'Re-encode the image as JPEG, PNG or BMP.',
  CHECK_IMAGE_URL: 'Check the network, or upload the image instead.',
  START_NEW_UPLOAD: 'Start a new upload.',
  CHECK_CAMERA_SOURCE: 'Check the camera\'s address, stream path and source type.',
  CHECK_CAMERA_NETWORK: 'Check that the camera is switched on and reachable from the device.',
  CHECK_CAMERA_CREDENTIALS: 'Check the camera\'s user name and password.',
  CHANGE_CAMERA_ENCODING: 'Set the camera to a codec the device decodes, such as H.264.',
  CONFIRM_AT_NEW_ADDRESS: 'Open the device at its new address, sign in there and confirm the change before its deadline.',
  USE_ONE_SUBJECT_PHOTO: 'Use a photo with one face, or add from a detection (Detection page: “Add to gallery” on the face).',
  USE_BETTER_FACE_PHOTO: 'Use a photo where the face is larger, sharp and turned towards the camera.',
  LOWER_TARGET_FPS: 'Choose a rate the camera delivers (at most its frames per second).',
  NONE: '',
}

export interface ShownError {
  title: string
  messageKey: string | null
  httpStatus: number | null
  /** [label, value] rows: actual value, limit, field, ... */
  facts: [string, string][]
  action: string | null
  actionText: string | null
  retryAfterSeconds: number | null
  retryable: boolean | null
  next: NextStep | null
}

/** A byte count in its unit ("2.00 MB"), and with the exact count unless `short`. */
const bytes = (value: unknown, short = false) => {
  const n = Number(value)
  if (!Number.isFinite(n)) return String(value)
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB']
  let v = n
  let u = 0
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++ }
  if (u === 0) return `${n} bytes`
  const inUnit = `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`
  return short ? inUnit : `${inUnit} (${n} bytes)`
}

const NUMBER = new Intl.NumberFormat('en-US')
const count = (value: unknown) => (Number.isFinite(Number(value)) && value !== '' ? NUMBER.format(Number(value)) : String(value))
const pixels = (value: unknown) => `${count(value)} pixels`
const list = (value: unknown) => (Array.isArray(value) ? value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ') : String(value))

/** Boxes found (details.boxes of GalleryFaceCount): where, in pixels of the picture. */
const boxList = (value: unknown) => (Array.isArray(value)
  ? value.length === 0 ? 'none' : value.map((b) => { const { x, y, width, height } = b as Record<string, number>; return `at ${x}, ${y} (${width} × ${height} px)` }).join('; ')
  : String(value))

/** details → facts in this order, with byte and pixel counts made readable (spec 2.7 names actualBytes, limitBytes, ...). */
const FACT_LABELS: [string, string, (v: unknown) => string][] = [
  ['actualBytes', 'Actual size', (v) => bytes(v)],
  ['limitBytes', 'Limit', (v) => bytes(v)],
  ['actualPixels', 'Actual pixels', pixels],
  ['limitPixels', 'Pixel limit', pixels],
  ['requiredBytes', 'Required', (v) => bytes(v)],
  ['availableBytes', 'Available', (v) => bytes(v)],
  ['reserveBytes', 'Safety reserve', (v) => bytes(v)],
  ['resource', 'Resource', String],
  ['purpose', 'Purpose', String],
  ['field', 'Field', String],
  ['reason', 'Reason', String],
  // spec 4.10 algorithm management
  ['algorithmId', 'Algorithm', String],
  ['algorithmCode', 'Algorithm', String],
  ['cameraId', 'Camera', String],
  ['taskIds', 'Tasks using it', list],
  ['modelId', 'Model', String],
  ['missingModel', 'Missing model', String],
  ['file', 'File', String],
  ['entry', 'Package entry', String],
  ['limitEntries', 'Entry limit', count],
  ['atLeastBytes', 'Expanded size (at least)', (v) => bytes(v)],
  // spec 4.10 Schedule: who uses a schedule
  ['boxes', 'Found', boxList],
  ['policies', 'Policies using it', (v) => (Array.isArray(v) ? v.map((p) => `“${(p as { policyName?: string }).policyName}”`).join(', ') : String(v))],
]
/**
 * Advice made specific by the error's details (the numbers the device sent), else the
 * action's general text.
 */
function actionTextOf(action: string, details: Record<string, unknown>): string | null {
  if (action === 'USE_ONE_SUBJECT_PHOTO') {
    const noun = details.persons !== undefined ? 'person' : 'face'
    const found = Number(details.faces ?? details.persons)
    if (found === 0) return `No ${noun} was found: use a photo where one ${noun} is clearly visible, or add from a detection (Detection page: “Add to gallery”).`
    if (found > 1) return `The photo shows ${found} ${noun}s: use a photo with one ${noun}, or add from a detection (Detection page: “Add to gallery” on the ${noun} you mean).`
  }
  if (action === 'LOWER_TARGET_FPS' && Number.isFinite(Number(details.sourceFps))) {
    const fps = Number(details.sourceFps)
    return `The camera sends ${fps} frames per second: choose at most ${fps} (analysing fewer, e.g. ${Math.max(1, Math.min(5, Math.floor(fps)))}, saves processing).`
  }
  return ACTION_TEXT[action] || null
}

/** Shown elsewhere (the wait) or together (the image's dimensions). */
const NOT_FACTS = new Set(['retryAfterSeconds', 'width', 'height'])

/** Seconds as "2 d 3 h", "3 h 12 min", "4 min 5 s" or "42 s". */
const duration = (value: unknown) => {
  const total = Number(value)
  if (!Number.isFinite(total)) return String(value)
  const d = Math.floor(total / 86_400), h = Math.floor((total % 86_400) / 3600), m = Math.floor((total % 3600) / 60), sec = Math.floor(total % 60)
  return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : m ? `${m} min ${sec} s` : `${sec} s`
}

/** `missingModel` → "Missing model". */
export const words = (key: string) => {
  const spaced = key.replace(/[_-]+/g, ' ').replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().trim()
  return spaced.charAt(0).toUpperCase() + spaced.slice(1)
}

/** A details value the table above does not know, formatted by what its key says it is. */
export function formatDetail(key: string, value: unknown): string {
  if (/bytes$/i.test(key)) return bytes(value)
  if (/pixels$/i.test(key)) return pixels(value)
  // spec 8: timestamps are millisecond strings.
  if (/^(at|since|until|timestamp)$|(At|Time)$/.test(key) && /^\d{12,13}$/.test(String(value))) return new Date(Number(value)).toLocaleString()
  if (/seconds$/i.test(key)) return duration(value)
  if (/percent$/i.test(key) && Number.isFinite(Number(value))) return `${Number(value).toFixed(1)} %`
  if (/Ms$/.test(key)) return `${count(value)} ms`
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  if (typeof value === 'number') return count(value)
  if (Array.isArray(value)) return list(value)
  if (value !== null && typeof value === 'object') return Object.entries(value).map(([k, v]) => `${words(k)}: ${formatDetail(k, v)}`).join('; ')
  return String(value)
}

/** Every field of `details` (spec 7.2: the client shows what the device sends), known ones first. */
function factsOf(details: Record<string, unknown>): [string, string][] {
  const present = (key: string) => details[key] !== undefined && details[key] !== null
  const facts = FACT_LABELS.filter(([key]) => present(key)).map(([key, label, format]) => [label, format(details[key])] as [string, string])
  if (present('width') && present('height')) facts.push(['Image dimensions', `${count(details.width)} × ${count(details.height)} pixels`])
  const known = new Set(FACT_LABELS.map(([key]) => key))
  for (const [key, value] of Object.entries(details)) {
    if (known.has(key) || NOT_FACTS.has(key) || value === undefined || value === null) continue
    facts.push([words(key), formatDetail(key, value)])
  }
  return facts
}

/** The console's own next step for an error, where it has one. */
export type NextStep = { kind: 'upload-model'; modelId: string } | { kind: 'cancel-tasks'; algorithmId: string; taskIds: string[] }
  | { kind: 'camera-tasks'; cameraId: string; taskIds: string[] }

function nextStepOf(messageKey: string, details: Record<string, unknown>): NextStep | null {
  // docs/system.md "Models": a pipeline whose operator-supplied model is absent names it in details.missingModel.
  if (typeof details.missingModel === 'string') return { kind: 'upload-model', modelId: details.missingModel }
  if (messageKey === 'api.error.AlgorithmInUse' && Array.isArray(details.taskIds) && typeof details.algorithmId === 'string')
    return { kind: 'cancel-tasks', algorithmId: details.algorithmId, taskIds: details.taskIds.map(String) }
  if (messageKey === 'api.error.CameraInUse' && Array.isArray(details.taskIds) && typeof details.cameraId === 'string')
    return { kind: 'camera-tasks', cameraId: details.cameraId, taskIds: details.taskIds.map(String) }
  return null
}

/** Is this route a multipart request (a bare 413 means "use chunks") or a JSON one ("smaller body")? */
const isMultipartRoute = (route: string) => /\/uploadTemp$/i.test(route)

/** An error as spec 7.2 asks clients to show it: text, actual value, limit, action, wait. */
export function showError(error: unknown): ShownError {
  if (error instanceof DeviceError) {
    const item = error.item
    if (!item) {
      // spec 7.1: a low-level rejection may carry only a generic 413; explain it by request type.
      const action = error.status === 413 ? (isMultipartRoute(error.route) ? 'USE_CHUNKED_UPLOAD' : 'REDUCE_REQUEST_BODY') : null
      return {
        title: error.status === 413
          ? (isMultipartRoute(error.route) ? 'The upload request was too large for the device (HTTP 413).' : 'The request body was too large for the device (HTTP 413).')
          : `The device answered HTTP ${error.status} without details.`,
        messageKey: null, httpStatus: error.status, facts: [], action, actionText: action ? ACTION_TEXT[action]! : null, retryAfterSeconds: null, retryable: null, next: null,
      }
    }
    const details = item.details ?? {}
    const facts = factsOf(details)
    const retryAfter = item.retryAfterSeconds ?? (typeof details.retryAfterSeconds === 'number' ? details.retryAfterSeconds : null)
    return {
      title: MESSAGE_TEXT[item.messageKey] ?? item.msgText ?? item.messageKey,
      messageKey: item.messageKey,
      httpStatus: error.status,
      facts,
      action: item.recommendedAction && item.recommendedAction !== 'NONE' ? item.recommendedAction : null,
      actionText: actionTextOf(item.recommendedAction, details),
      retryAfterSeconds: retryAfter,
      retryable: item.retryable,
      next: nextStepOf(item.messageKey, details),
    }
  }
  if (error instanceof NetworkError) {
    return { title: 'The device cannot be reached (connection lost or refused).', messageKey: null, httpStatus: null, facts: [], action: 'RETRY', actionText: 'Check the connection, then try again.', retryAfterSeconds: null, retryable: true, next: null }
  }
  return { title: (error as Error)?.message ?? String(error), messageKey: null, httpStatus: null, facts: [], action: null, actionText: null, retryAfterSeconds: null, retryable: null, next: null }
}

export { bytes as formatBytes, count as formatCount }
