import { RecommendedAction as A } from './actions.ts'

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
 */
export interface CatalogueEntry {
  msgCode: string
  messageKey: string
  msgText: string
  httpStatus: number
  retryable: boolean
  recommendedAction: A
  retryAfterSeconds?: number
}

const entry = (
  msgCode: string,
  messageKey: string,
  msgText: string,
  recommendedAction: A,
  options: { httpStatus?: number; retryable?: boolean; retryAfterSeconds?: number } = {},
): CatalogueEntry => ({
  msgCode,
  messageKey,
  msgText,
  recommendedAction,
  httpStatus: options.httpStatus ?? 200,
  retryable: options.retryable ?? false,
  ...(options.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: options.retryAfterSeconds }),
})

export const catalogue = {
  // ── spec 7.1: detection and task errors ────────────────────────────────────────────
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

  // ── spec 7.1: media and transfer limits ─────────────────────────────────────────────
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

  // ── uploads (spec 2.5, 3.1, 4.5, 4.6, 4.12, 7.1) ───────────────────────────
  UPLOAD_NOT_FOUND: entry('UPLOAD_NOT_FOUND', 'api.error.uploadNotFound',
    'No upload session with this uploadId exists for the signed-in user.', A.START_NEW_UPLOAD),
  UPLOAD_EXPIRED: entry('UPLOAD_EXPIRED', 'api.error.uploadExpired',
    'The upload session expired after being idle (or reaching its absolute lifetime); its bytes were deleted.', A.START_NEW_UPLOAD),
  UPLOAD_CONSUMED: entry('UPLOAD_CONSUMED', 'api.error.uploadConsumed',
    'The upload was already consumed and cannot be used again.', A.START_NEW_UPLOAD),
  UPLOAD_CANCELLED: entry('UPLOAD_CANCELLED', 'api.error.uploadCancelled',
    'The upload session was cancelled.', A.START_NEW_UPLOAD),
  UPLOAD_FAILED: entry('UPLOAD_FAILED', 'api.error.uploadFailed',
    'The upload session failed (for example its sha256 did not match) and was released.', A.START_NEW_UPLOAD),
  UPLOAD_CHECKSUM_MISMATCH: entry('UPLOAD_CHECKSUM_MISMATCH', 'api.error.uploadChecksumMismatch',
    'The sha256 of the received file differs from the sha256 sent with the chunks; the session was released.', A.CHECK_UPLOAD_PARAMETERS),
  UPLOAD_DIFFERENT_FILE: entry('UPLOAD_DIFFERENT_FILE', 'api.error.uploadDifferentFile',
    'A resent chunk (chunk 0 with the same clientRequestId to resume, or a chunk already accepted) holds other bytes than the chunk stored for it: it is another file. The session is unchanged; send the new file with a new clientRequestId.', A.START_NEW_UPLOAD),
  UPLOAD_NOT_COMPLETE: entry('UPLOAD_NOT_COMPLETE', 'api.error.uploadNotComplete',
    'The upload has not received all of its chunks yet.', A.CHECK_UPLOAD_PARAMETERS),
  UPLOAD_PARAMETERS_MISMATCH: entry('UPLOAD_PARAMETERS_MISMATCH', 'api.error.uploadParametersMismatch',
    'A chunk does not agree with its upload session (filename, purpose, sizes, counts or digest).', A.CHECK_UPLOAD_PARAMETERS),
  UPLOAD_CHUNK_OUT_OF_ORDER: entry('UPLOAD_CHUNK_OUT_OF_ORDER', 'api.error.uploadChunkOutOfOrder',
    'chunkIndex is not the next required chunk of the session.', A.CHECK_UPLOAD_PARAMETERS),
  UPLOAD_CHUNK_TOO_LARGE: entry('UPLOAD_CHUNK_TOO_LARGE', 'api.error.uploadChunkTooLarge',
    'The chunk is larger than the live maxChunkSize.', A.CHECK_UPLOAD_PARAMETERS, { httpStatus: 413 }),
  UPLOAD_CHUNKS_TOO_SMALL: entry('UPLOAD_CHUNKS_TOO_SMALL', 'api.error.uploadChunksTooSmall',
    'With this chunk the remaining chunks cannot carry the rest of totalSize within maxChunkSize.', A.USE_LARGER_CHUNKS),
  UPLOAD_TOO_MANY_CHUNKS: entry('UPLOAD_TOO_MANY_CHUNKS', 'api.error.uploadTooManyChunks',
    'totalChunks exceeds the deployment policy maxChunks.', A.USE_LARGER_CHUNKS_OR_CHANGE_POLICY),
  UPLOAD_TOO_LARGE: entry('UPLOAD_TOO_LARGE', 'api.error.uploadTooLarge',
    'totalSize exceeds the deployment policy maxTotalSize.', A.CHANGE_DEPLOYMENT_POLICY),
  UPLOAD_PURPOSE_MISMATCH: entry('UPLOAD_PURPOSE_MISMATCH', 'api.error.uploadPurposeMismatch',
    'The upload was made for another purpose than the one that tries to use it.', A.CHECK_UPLOAD_PARAMETERS),

  // ── spec 5: authentication ──────────────────────────────────────────────────────────
  Unauthorized: entry('401', 'api.error.Unauthorized',
    'The mtk header is missing, unknown or expired.', A.SIGN_IN_AGAIN, { httpStatus: 401 }),
  LoginFailed: entry('2001', 'api.error.LoginFailed',
    'Account or password is wrong.', A.CHECK_REQUEST_PARAMETERS),
  LoginLocked: entry('2002', 'api.error.LoginLocked',
    'Too many failed sign-ins for this account from this address; try again later.', A.RETRY_LATER, { retryable: true }),
  PasswordChangeRequired: entry('2003', 'api.error.PasswordChangeRequired',
    'The password must be changed before business use.', A.CHANGE_PASSWORD, { httpStatus: 403 }),
  PasswordWeak: entry('2004', 'api.error.PasswordWeak',
    'The new password is not accepted by the device password policy.', A.CHECK_REQUEST_PARAMETERS),
  LoginBusy: entry('2005', 'api.error.LoginBusy',
    'Too many passwords are being checked at once; try again shortly.', A.RETRY_LATER, { retryable: true, retryAfterSeconds: 1 }),

  // ── AI host, models, upgrade (spec 4.9, 4.11) ─────────────────────────────────────────────
  ModelNotFound: entry('7001', 'api.error.ModelNotFound',
    'No model with this id exists on the device.', A.CHECK_REQUEST_PARAMETERS),
  ModelInvalid: entry('7002', 'api.error.ModelInvalid',
    'The file is not a loadable ONNX model.', A.CHECK_UPLOAD_PARAMETERS),
  ModelInUse: entry('7003', 'api.error.ModelInUse',
    'The model is used by a running task or a shipped pipeline and cannot be deleted.', A.NONE),
  ModelPresetReadOnly: entry('7004', 'api.error.ModelPresetReadOnly',
    'Preset models cannot be changed or deleted.', A.NONE),
  ModelFileMissing: entry('7005', 'api.error.ModelFileMissing',
    'The model file is missing on the device.', A.CHECK_MODEL_STATUS),
  ImportFileNotFound: entry('7006', 'api.error.ImportFileNotFound',
    'No such file in the device import folder.', A.CHECK_REQUEST_PARAMETERS),
  UpgradeBadFilename: entry('7101', 'api.error.upgradeBadFilename',
    'The upgrade package name must be <product>-V<major>.<minor>.<patch>-<32-hex md5>.tar.gz.', A.CHECK_UPLOAD_PARAMETERS),
  UpgradeWrongProduct: entry('7102', 'api.error.upgradeWrongProduct',
    'The upgrade package is for another product.', A.CHECK_UPLOAD_PARAMETERS),
  UpgradeMd5Mismatch: entry('7103', 'api.error.upgradeMd5Mismatch',
    'The MD5 of the upgrade package does not match the one in its name.', A.START_NEW_UPLOAD),
  UpgradeArchiveCorrupt: entry('7104', 'api.error.upgradeArchiveCorrupt',
    'The upgrade package is not a readable gzip-compressed tar archive.', A.START_NEW_UPLOAD),
  UpgradeUnsafePath: entry('7105', 'api.error.upgradeUnsafePath',
    'The upgrade archive has an entry with an absolute path or a .. segment.', A.NONE),
  UpgradeUnsafeLink: entry('7106', 'api.error.upgradeUnsafeLink',
    'The upgrade archive has a link that points outside the package.', A.NONE),
  UpgradeUnsafeEntryType: entry('7107', 'api.error.upgradeUnsafeEntryType',
    'The upgrade archive has a device file, FIFO or other special entry.', A.NONE),
  UpgradeTooManyEntries: entry('7108', 'api.error.upgradeTooManyEntries',
    'The upgrade archive has more entries than allowed.', A.NONE),
  UpgradeTooLarge: entry('7109', 'api.error.upgradeTooLarge',
    'The upgrade archive expands to more bytes than allowed.', A.NONE),
  UpgradeManifestMissing: entry('7110', 'api.error.upgradeManifestMissing',
    'The upgrade package has no manifest.json at its root.', A.NONE),
  UpgradeManifestInvalid: entry('7111', 'api.error.upgradeManifestInvalid',
    'The manifest of the upgrade package is malformed or disagrees with the package name.', A.NONE),
  UpgradeChecksumMismatch: entry('7112', 'api.error.upgradeChecksumMismatch',
    'A file of the upgrade package is missing or does not match its checksum in the manifest.', A.NONE),
  UpgradeNotNewer: entry('7113', 'api.error.upgradeNotNewer',
    'The package version is not newer than the running version.', A.NONE),
  UpgradeInProgress: entry('7114', 'api.error.upgradeInProgress',
    'An upgrade is already staged and waiting for the restart.', A.RETRY_LATER, { retryable: true, retryAfterSeconds: 10 }),
  OverviewNotFound: entry('7201', 'api.error.OverviewNotFound',
    'The task has no annotated picture yet: run a detection first.', A.NONE),
  UpgradeNotSupervised: entry('7115', 'api.error.upgradeNotSupervised',
    'The device is not run by its supervisor (npm start), so it cannot restart into a new version.', A.CHANGE_DEPLOYMENT_POLICY),
  // ── algorithm and layout management (spec 4.10, shapes in models/README.md) ──
  AlgorithmNotFound: entry('7301', 'api.error.AlgorithmNotFound',
    'No algorithm with this id exists on the device.', A.QUERY_ALGORITHMS),
  AlgorithmExists: entry('7302', 'api.error.AlgorithmExists',
    'An algorithm with this id already exists: update it, or delete it first.', A.CHECK_REQUEST_PARAMETERS),
  AlgorithmInUse: entry('7303', 'api.error.AlgorithmInUse',
    'Tasks use this algorithm: cancel them before deleting or replacing it.', A.NONE),
  AlgorithmInvalid: entry('7304', 'api.error.AlgorithmInvalid',
    'The pipeline layout is not valid: see details.reason.', A.CHECK_REQUEST_PARAMETERS),
  AlgorithmPackageInvalid: entry('7305', 'api.error.AlgorithmPackageInvalid',
    'The algorithm package is not a valid zip or tar.gz package with a manifest and its model files.', A.CHECK_UPLOAD_PARAMETERS),
  AlgorithmPackageUnsafe: entry('7306', 'api.error.AlgorithmPackageUnsafe',
    'An entry of the algorithm package would leave its folder or is not a regular file.', A.CHECK_UPLOAD_PARAMETERS),
  AlgorithmPackageTooLarge: entry('7307', 'api.error.AlgorithmPackageTooLarge',
    'The algorithm package has too many entries or expands beyond the size limit.', A.CHECK_UPLOAD_PARAMETERS),
  // ── network changes (spec 4.10 Network) ─────────────────────────────────────────────────
  NetworkBackendUnavailable: entry('8001', 'api.error.NetworkBackendUnavailable',
    'No supported network configuration backend (NetworkManager, systemd-networkd, ifupdown) was found on this host; the network cannot be changed from the device.', A.CHANGE_DEPLOYMENT_POLICY),
  NetworkChangeNotPermitted: entry('8002', 'api.error.NetworkChangeNotPermitted',
    'The device process may not change the network configuration (it needs root or CAP_NET_ADMIN and write access to the backend\'s files); nothing was changed.', A.CHANGE_DEPLOYMENT_POLICY),
  NetworkChangePending: entry('8003', 'api.error.NetworkChangePending',
    'Another network change waits for its confirmation: confirm or revert it, or wait for its rollback.', A.RETRY_LATER, { retryable: true }),
  NetworkChangeNotFound: entry('8004', 'api.error.NetworkChangeNotFound',
    'No network change with this id waits for confirmation (it was confirmed or rolled back, or never made).', A.CHECK_REQUEST_PARAMETERS),
  NetworkChangeFailed: entry('8005', 'api.error.NetworkChangeFailed',
    'The backend could not apply the network change; the previous configuration was restored.', A.CHECK_REQUEST_PARAMETERS),
  // ── cameras (spec 4.10 Camera): each way a source fails has its own key ─────────────
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
  // ── face galleries (spec 4.10 "Face gallery", README "Face galleries") ─────────────────
  GalleryNotFound: entry('7501', 'api.error.GalleryNotFound',
    'No face gallery with this id exists.', A.CHECK_REQUEST_PARAMETERS),
  GalleryExists: entry('7502', 'api.error.GalleryExists',
    'A face gallery with this id already exists.', A.CHECK_REQUEST_PARAMETERS),
  GalleryPersonNotFound: entry('7503', 'api.error.GalleryPersonNotFound',
    'No person with this id exists in the gallery.', A.CHECK_REQUEST_PARAMETERS),
  GalleryPersonExists: entry('7504', 'api.error.GalleryPersonExists',
    'A person with this id already exists in the gallery.', A.CHECK_REQUEST_PARAMETERS),
  GalleryFaceCount: entry('7505', 'api.error.GalleryFaceCount',
    'A person image must show exactly one face: details.faces is how many were found.', A.CHECK_REQUEST_PARAMETERS),
  GalleryFaceNotFound: entry('7506', 'api.error.GalleryFaceNotFound',
    'No face image with this id exists.', A.CHECK_REQUEST_PARAMETERS),
  FaceImportNotFound: entry('7507', 'api.error.FaceImportNotFound',
    'No face import job with this id exists.', A.CHECK_REQUEST_PARAMETERS),
  FaceImportArchiveInvalid: entry('7508', 'api.error.FaceImportArchiveInvalid',
    'The face import is not a readable zip or tar.gz archive.', A.CHECK_UPLOAD_PARAMETERS),
  FaceImportArchiveUnsafe: entry('7509', 'api.error.FaceImportArchiveUnsafe',
    'An entry of the face import archive would leave its folder or is not a regular file.', A.CHECK_UPLOAD_PARAMETERS),
  FaceImportArchiveTooLarge: entry('7510', 'api.error.FaceImportArchiveTooLarge',
    'The face import archive has too many entries or expands beyond the size limit.', A.CHECK_UPLOAD_PARAMETERS),
  FaceImportManifestInvalid: entry('7511', 'api.error.FaceImportManifestInvalid',
    'The face import archive has no readable manifest.csv or manifest.json at its root: see details.reason.', A.CHECK_UPLOAD_PARAMETERS),
  FaceImportInterrupted: entry('7512', 'api.error.FaceImportInterrupted',
    'The device stopped while the face import ran; run the import again (rows already imported are skipped).', A.START_NEW_UPLOAD),
  // ── inference sidecar and tasks (spec 3.2, 4.7) ───────────────────────────────────────────
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

  // ── events: MQTT request transport (spec 5.6) ───────────────────────────────────────
  MqttNotRegistered: entry('3001', 'api.error.MqttNotRegistered',
    'The device has not completed its MQTT connection and registration; the request was not run.', A.RETRY_LATER, { retryable: true, retryAfterSeconds: 1 }),

  // ── runtime ─────────────────────────────────────────────────────────────────────────
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

export type ErrorId = keyof typeof catalogue
