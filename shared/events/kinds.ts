/**
 * Event kinds as data (spec 6 leaves kinds and payloads open; docs/events.md "Events" documents
 * them and they are kept stable). Adding a kind is one row here plus its producer.
 *
 * - `source`: the part of the device that produces it (the event's `source` field).
 * - `alarm`: included in the alarm export (`/gtw/cwai/Event/ExportAlarms`).
 * - `payload`: field → meaning, for docs/events.md and the interface document.
 */
export interface EventKindInfo {
  source: string
  alarm: boolean
  doc: string
  payload: Record<string, string>
}

const kind = (source: string, alarm: boolean, doc: string, payload: Record<string, string>): EventKindInfo =>
  ({ source, alarm, doc, payload })

/** What a snapshot is (docs/cameras-and-stream-tasks.md "Snapshots"): `object.entered`, `alarm.raised`. */
const SNAPSHOT_FIELDS = {
  snapshotWidth: 'number; the snapshot\'s width in pixels', snapshotHeight: 'number',
  snapshotFullResolution: 'boolean; true: cut from a frame at the camera\'s own size (the box scaled to it), false: the analysed frame, at the analysis size',
  snapshotSkewMs: 'number; how far (ms) after the analysed frame the frame it was cut from is (0 for the analysed frame; down to -15: the same frame, received a few ms apart)',
  snapshotFallback: 'string or null; why it is the analysed frame when a full-resolution one was wanted (too late, camera without a frame, capture in flight, file camera)',
}
/** The same fields, null when the event has no snapshot. */
const nullable = (fields: Record<string, string>) => Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.startsWith('string or null') ? v : v.replace(/^(\w+)/, '$1 or null')]))

export const EVENT_KINDS = {
  'device.started': kind('runtime', false, 'The runtime finished starting.', {
    softwareVersion: 'string; version of the running process', buildHash: 'string', startedAt: 'number; ms since epoch' }),
  'device.stopping': kind('runtime', false, 'The runtime received a stop request and is shutting down.', {
    reason: 'string; e.g. "SIGTERM"', uptimeMs: 'number' }),
  'sidecar.restarted': kind('sidecar', true, "The inference sidecar died and its supervisor started a new one (emitted when the new one is ready; one event per process that died, also those killed before they were ready, so the last `restarts` equals `Info`'s count).", {
    exitCode: 'number or null; exit code of the process that died', signal: 'string or null; signal that ended it', restarts: 'number; restarts since the runtime started' }),
  'storage.reserveReached': kind('uploads', true, 'An upload was refused because the disk safety reserve would be crossed (STORAGE_RESERVE_REACHED, spec 7.1).', {
    purpose: 'string; upload purpose', requiredBytes: 'number', availableBytes: 'number', reserveBytes: 'number', availableForNewUploadsBytes: 'number' }),
  'upload.expired': kind('uploads', false, 'An upload session expired (spec 3.1 open → expired).', {
    uploadId: 'string', purpose: 'string', reason: '"idle" or "absolute lifetime"', receivedBytes: 'number' }),
  'password.changed': kind('login', false, 'An account changed its password; every session of that account was revoked (spec 5.5).', {
    accountName: 'string', revokedSessions: 'number' }),
  'login.locked': kind('login', true, 'A client address was blocked for an account name after repeated failed password checks (other addresses are not).', {
    accountName: 'string', clientAddress: 'string or null; the blocked address', failures: 'number; consecutive failures from that address', lockedUntil: 'number; ms since epoch' }),
  'upgrade.staged': kind('system', false, 'A software upgrade package passed every check and was staged; the device restarts into it (spec 4.11).', {
    version: 'string; package version', fromVersion: 'string; running version', requestedBy: 'string or null; account name' }),
  'upgrade.finished': kind('system', true, 'The start-up script finished a staged upgrade: installed, rolled back, or refused (emitted by the version that runs afterwards).', {
    version: 'string; package version', fromVersion: 'string', outcome: '"installed", "rolled-back" or "refused"', reason: 'string or null; why it was not installed', softwareVersion: 'string; version now running' }),
  'settings.rejected': kind('system', true, 'Stored settings could not be applied when the device started; the device runs without them until they are set again.', {
    setting: '"mqtt" or "webhook"', reason: 'string; why they could not be applied' }),
  'backup.created': kind('system', false, 'A backup archive was produced and waits for its download (spec 4.10 System).', {
    backupId: 'string', sizeBytes: 'number', tables: 'number; tables in the backup', files: 'number; data files in the backup', requestedBy: 'string or null; account name' }),
  'restore.staged': kind('system', false, 'A backup passed every check and was staged; the device restarts to apply it.', {
    backupCreatedAt: 'number; ms since epoch', backupSoftwareVersion: 'string', requestedBy: 'string or null; account name' }),
  'restore.finished': kind('system', true, 'The device applied a staged restore at its start, or found it could not and kept its previous state (emitted by the restarted device).', {
    outcome: '"restored" or "failed"', reason: 'string or null; why it failed', backupCreatedAt: 'number', backupSoftwareVersion: 'string', migrationsRun: 'number; database migrations run forward on the restored data (0 for a backup of this schema)' }),
  'device.factoryReset': kind('system', true, 'The device was reset to its factory state (the first event of the reset device).', {
    requestedBy: 'string or null; account name', requestedAt: 'number; ms since epoch' }),
  'network.changed': kind('network', false, 'A network change was applied (waiting for confirmation) or confirmed (spec 4.10 Network).', {
    changeId: 'string', adapter: 'string', backend: 'string; the backend type key', outcome: '"applied" or "confirmed"', requestedBy: 'string or null; account name' }),
  'network.rolledBack': kind('network', true, 'A network change was not confirmed in time (or was reverted) and the previous configuration was restored.', {
    changeId: 'string', adapter: 'string', backend: 'string', reason: '"timeout", "reverted" or "apply failed"' }),
  'camera.online': kind('cameras', false, 'A camera delivers frames again (or for the first time since it was added or the device started).', {
    cameraId: 'string', cameraName: 'string', width: 'number; decoded width', height: 'number', fps: 'number or null; the source\'s frame rate' }),
  'camera.offline': kind('cameras', true, 'A camera stopped delivering frames or could not be reached; the device keeps reconnecting with backoff.', {
    cameraId: 'string', cameraName: 'string', messageKey: 'string; the catalogue key of the failure (api.error.Camera...)', reason: 'string; what failed, credentials removed' }),
  'object.entered': kind('analysis', false, 'A stream task started tracking an object (seen in consecutive analysed frames).', {
    taskId: 'string', cameraId: 'string', objectId: 'string; stable while the object is tracked', label: 'string', confidence: 'number',
    box: "{x, y, width, height} in the camera's own pixels", snapshotUrl: "string; the camera's first frame at its own size at or after the detection with the object boxed, else the analysed frame (JPEG, Range supported)",
    ...SNAPSHOT_FIELDS }),
  'object.left': kind('analysis', false, 'A tracked object was not seen for the leave delay (it left, or is hidden).', {
    taskId: 'string', cameraId: 'string', objectId: 'string', label: 'string', dwellMs: 'number; first to last sighting' }),
  'object.recognized': kind('analysis', false, "A stream task with taskConfig.recognition named a tracked object's face: first answer, and again whenever a better view changes it.", {
    taskId: 'string', cameraId: 'string', objectId: 'string; the object of object.entered', label: "string; the object's label",
    name: 'string; the person\'s name, or "unknown" below the threshold', personId: 'string or null', galleryId: 'string or null',
    similarity: 'number; similarity of the best gallery person (docs/galleries.md "Measure")', faceBox: "{x, y, width, height}; the face in the camera's pixels" }),
  'alarm.raised': kind('analysis', true, 'A stream task raised an alarm: an alarm policy\'s conditions were met (spec 4.10 Linkage / alarm policy; once per object and stay, within the cooldown), or the pipeline\'s logic node answered true for a tracked object (once per object).', {
    alarmId: 'string; the alarm\'s id (its picture\'s and clip\'s)', taskId: 'string', cameraId: 'string or null', alarmType: '"policy" or "logic"', message: 'string',
    policyId: 'string or null; the policy (null for a logic alarm)', policyName: 'string or null',
    objectId: 'string or null; the tracked object (null when the policy counts several, see objectIds)', objectIds: 'string[]', label: 'string or null',
    areaId: 'string or null; the region the object was in', count: 'number; objects that met the conditions', dwellMs: 'number or null; how long the object met them', box: '{x, y, width, height} or null; the (first) object\'s box in the camera\'s own pixels',
    snapshotUrl: 'string or null; the camera\'s first frame at its own size at or after the detection with the objects boxed, else the analysed frame (JPEG, Range supported), kept as long as the event', imageUrl: 'string or null; the same as snapshotUrl',
    clipUrl: 'string or null; the clip of the policy\'s clip action (video/mp4)',
    ...nullable(SNAPSHOT_FIELDS),
    personId: 'string or null; the person the task\'s recognition named the (first) object as (taskConfig.recognition; null for a stranger or before its face was seen)',
    name: 'string or null; that person\'s name, "unknown" for a stranger, null when no face was seen', galleryId: 'string or null; the person\'s face gallery',
    similarity: 'number or null; similarity of the best gallery person (docs/galleries.md "Measure"; below the task\'s threshold for a stranger)' }),
  'alarm.actionFailed': kind('analysis', false, 'An action of an alarm policy failed after its attempts (webhook, MQTT, clip, audio); the alarm itself is recorded.', {
    alarmId: 'string', alarmEventId: 'number; the alarm.raised event', policyId: 'string', action: '"webhook", "mqtt", "clip" or "audio"',
    target: 'string; the URL (no credentials), topic, camera or column', attempts: 'number', reason: 'string' }),
  'passengerFlow.counted': kind('analysis', false, "A tracked object crossed a stream task's counter line (taskConfig.counters); one event per crossing.", {
    taskId: 'string', cameraId: 'string or null', counterId: 'string', counterName: 'string', objectId: 'string', label: 'string',
    in: 'number; 1 when it crossed from the line\'s left to its right (looking from `from` to `to`), else 0', out: 'number; 1 the other way, else 0' }),
  'recording.clipReady': kind('recording', false, 'A recorded clip was written (spec 4.10 System: recording): an event clip around an object\'s visit (object.entered to object.left) or an alarm, with the pre- and post-roll, or a piece of continuous recording. One tracked object\'s visit and the alarms raised on it share one clip: a follow-up per originating event, each naming its event in `eventId` and all of them in `eventIds`, with the same `clipId`. Fetch it at `clipUrl` (video/mp4, Range supported).', {
    clipId: 'string', clipUrl: 'string; GET with mtk, or a playback link from File/ClipPlayUrl', cameraId: 'string', kind: '"event" or "continuous"',
    eventId: 'number or null; the object.entered or alarm.raised event the clip belongs to', eventKind: 'string or null',
    eventIds: '(number or null)[]; every event the clip belongs to (the object.entered and the alarm.raised events of one object; null for an alarm whose event was not written)', taskId: 'string or null', objectId: 'string or null',
    startTime: 'number; ms since epoch of the first frame', endTime: 'number; ms since epoch after the last frame', durationMs: 'number; video in the file (less than the span when the camera reconnected meanwhile)', bytes: 'number' }),
  'recording.footageDeleted': kind('recording', true, 'Recorded clips were deleted before their retention days were over, to stay within the recording budget or above the disk safety reserve (spec 8); the oldest footage goes first.', {
    reason: '"budget" or "reserve"', clips: 'number; clips deleted', bytes: 'number; bytes freed', clipIds: 'string[]; the first 50',
    oldestStartTime: 'number; start of the oldest clip deleted', newestEndTime: 'number; end of the newest clip deleted' }),
  'recording.suspended': kind('recording', true, 'A camera\'s recording stopped writing: the disk is at its safety reserve and no recorded footage is left to delete. It resumes by itself when space returns (recording.resumed); analysis goes on.', {
    cameraId: 'string', reason: '"reserve"', availableBytes: 'number; free after the reserve and upload reservations' }),
  'recording.resumed': kind('recording', false, 'A suspended camera recording writes again.', {
    cameraId: 'string' }),
  'gallery.redescribing': kind('galleries', false, 'The gallery images of one kind described by another model than the current one are being described again from their stored pictures (docs/galleries.md "Descriptor model changes"): at the start, after every 10 images, and when done. Until an image is described again it matches nobody.', {
    kind: '"face", "body" or "things"', model: 'string; the current descriptor model', state: '"running" or "done"',
    total: 'number; images to describe again at the start', described: 'number; described so far', failed: 'number; pictures in which the model found no subject (kept, matching nobody)' }),
} as const satisfies Record<string, EventKindInfo>

export type EventKind = keyof typeof EVENT_KINDS
export const eventKindNames = Object.keys(EVENT_KINDS) as EventKind[]
export const isEventKind = (value: string): value is EventKind => Object.hasOwn(EVENT_KINDS, value)
export const alarmKinds = eventKindNames.filter((k) => EVENT_KINDS[k].alarm)
