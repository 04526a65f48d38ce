import { readFileSync } from 'node:fs'
import path from 'node:path'
import os from 'node:os'

/**
 * One typed configuration for the whole device. Every setting is a row of `settings`:
 * its environment variable, its key in the optional JSON file (`CONFIG_FILE`), its type,
 * default and meaning. docs/configuration.md lists every row (test/shared/config.unit.test.ts checks it).
 *
 * Precedence: environment variable > JSON file > default.
 */
type Kind = 'string' | 'int' | 'number' | 'boolean'

interface Setting<K extends Kind = Kind> {
  env: string
  kind: K
  default: K extends 'string' ? string : K extends 'boolean' ? boolean : number
  doc: string
}

const MB = 1024 * 1024
/**
 * Threads one detection's image work (libvips) and inference (onnxruntime intra-op) may use,
 * by machine size: the cores, at most 4. On 2 cores (bench/detect-speed.bench.ts,
 * details.threadSettings; docs/detection.md "Threads per detection") 2 and 2 was within the noise of a
 * loaded machine of the other settings under four clients and lets a lone request use both
 * cores. Above 4 a BlazeFace-sized request gains little (not measured) and concurrent
 * requests use the other cores.
 */
export const threadsForMachine = () => Math.max(1, Math.min(4, os.availableParallelism()))

const s = <K extends Kind>(env: string, kind: K, def: Setting<K>['default'], doc: string): Setting<K> =>
  ({ env, kind, default: def, doc })

export const settings = {
  port: s('PORT', 'int', 8080, 'HTTP port; 0 picks a free one (the chosen port is logged).'),
  host: s('HOST', 'string', '0.0.0.0', 'HTTP bind address.'),
  dataDir: s('DATA_DIR', 'string', './data', 'Every piece of state lives under it: database, upload staging, logs, prepared models.'),
  libsqlUrl: s('LIBSQL_URL', 'string', '', 'Database URL; default `file:<DATA_DIR>/device.db`. A `libsql://` or `http://` URL points at a sqld server.'),
  libsqlAuthToken: s('LIBSQL_AUTH_TOKEN', 'string', '', 'Auth token for a remote libsql server.'),
  initialAdminPassword: s('INITIAL_ADMIN_PASSWORD', 'string', 'admin123', 'First password of the default account `admin`; used only when the database is created.'),
  initialPasswordChangeRequired: s('INITIAL_PASSWORD_CHANGE_REQUIRED', 'boolean', true, 'Whether the default account must change its first password before business use (spec 5.7).'),
  functionsDir: s('FUNCTIONS_DIR', 'string', '', 'Folder of handler bundles and their manifest; default `dist/functions`. Watched for hot redeploys.'),
  logLevel: s('LOG_LEVEL', 'string', 'info', 'pino level: trace, debug, info, warn, error, fatal.'),

  sessionIdleTimeoutMs: s('SESSION_IDLE_TIMEOUT_MS', 'int', 2 * 60 * 60 * 1000, 'An mtk unused for this long expires (HTTP 401).'),
  // Session cache (runtime/auth/session-cache.ts): resolved mtk kept in memory, revoked at once.
  sessionCacheTtlMs: s('SESSION_CACHE_TTL_MS', 'int', 10_000, 'How long a resolved mtk is trusted without reading the database again; 0 = no cache. Logout and password changes take effect at once regardless.'),
  sessionCacheMaxEntries: s('SESSION_CACHE_MAX_ENTRIES', 'int', 1024, 'Most sessions kept in the mtk cache (least recently used dropped first).'),
  // Sign-in throttle (runtime/auth/login-throttle.ts, docs/sign-in-and-errors.md "Sign-in and sessions").
  loginMaxFailures: s('LOGIN_MAX_FAILURES', 'int', 5, 'Failed password checks of one account from one client address before that address is blocked for the account (0 = never); other addresses are not blocked.'),
  loginLockMs: s('LOGIN_LOCK_MS', 'int', 5 * 60 * 1000, 'First block of an address; each further failure from it doubles the block, up to LOGIN_MAX_BLOCK_MS.'),
  loginMaxBlockMs: s('LOGIN_MAX_BLOCK_MS', 'int', 60 * 60 * 1000, 'Longest block of an address.'),
  loginAccountDelayMaxMs: s('LOGIN_ACCOUNT_DELAY_MAX_MS', 'int', 2000, 'Most that failures from all addresses together space the password checks of the account apart (250 ms per failure beyond 20 recent ones); a check that comes too early is answered LoginBusy at once, with retryAfterSeconds.'),
  httpKeepAliveTimeoutMs: s('HTTP_KEEP_ALIVE_TIMEOUT_MS', 'int', 65_000, 'How long an idle HTTP connection is kept for the client\'s next request (advertised as `Keep-Alive: timeout=`); longer than a client may be busy between two requests, so that none is sent on a connection closing under it.'),
  httpTrustProxy: s('HTTP_TRUST_PROXY', 'boolean', false, 'A reverse proxy stands in front of the device: the client address is the last `X-Forwarded-For` entry. Leave off otherwise, or a client could name any address.'),
  metricsToken: s('METRICS_TOKEN', 'string', '', 'Bearer token a Prometheus scraper may send instead of an mtk to `GET /gtw/cwai/System/Metrics`; empty = mtk only. Use a long random value; never logged.'),
  passwordScrypt: s('PASSWORD_SCRYPT', 'string', 'N=16384,r=8,p=5', 'scrypt cost of new password hashes, `N=<N>,r=8,p=<p>`: one of OWASP\'s equivalent sets (N=2^17,p=1; 2^16,2; 2^15,3; 2^14,5; 2^13,10) or more. The default takes 16 MiB per hash; a stored hash of another cost is re-made at its next sign-in.'),
  passwordScryptAllowWeak: s('PASSWORD_SCRYPT_ALLOW_WEAK', 'boolean', false, 'Let PASSWORD_SCRYPT go below OWASP\'s sets, down to N=16384,r=8,p=1: for tests only.'),

  jsonBodyLimitBytes: s('JSON_BODY_LIMIT_BYTES', 'int', 1 * MB, 'Control-plane JSON request body limit (spec 8).'),
  multipartBodyLimitBytes: s('MULTIPART_BODY_LIMIT_BYTES', 'int', 10 * MB, 'Regular single multipart request limit (spec 8).'),
  backstopBodyLimitBytes: s('BACKSTOP_BODY_LIMIT_BYTES', 'int', 12 * MB, 'Emergency receive backstop of the HTTP layer (spec 8).'),
  shutdownGraceMs: s('SHUTDOWN_GRACE_MS', 'int', 30_000, 'On SIGTERM, how long in-flight requests may take before the process exits anyway.'),

  uploadMaxChunkBytes: s('UPLOAD_MAX_CHUNK_BYTES', 'int', 8 * MB, 'Per-request chunk limit, `maxChunkSize` (spec 2.5, 8).'),
  uploadMaxTotalBytes: s('UPLOAD_MAX_TOTAL_BYTES', 'int', 0, 'Complete-file quota, `maxTotalSize`; 0 = none (spec 8).'),
  uploadMaxChunks: s('UPLOAD_MAX_CHUNKS', 'int', 0, 'Chunk-count quota, `maxChunks`; 0 = none (spec 8).'),
  uploadMetadataBudgetBytes: s('UPLOAD_METADATA_BUDGET_BYTES', 'int', 64 * MB, 'Per-session metadata budget (spec 8).'),
  uploadIdleTimeoutMs: s('UPLOAD_IDLE_TIMEOUT_MS', 'int', 30 * 60 * 1000, 'Inactive upload sessions expire after this (spec 3.1, 8).'),
  uploadAbsoluteTimeoutMs: s('UPLOAD_ABSOLUTE_TIMEOUT_MS', 'int', 0, 'Absolute lifetime of an upload session; 0 = none (spec 8).'),
  uploadReserveBytes: s('UPLOAD_RESERVE_BYTES', 'int', 512 * MB, 'Fixed disk safety reserve (spec 8).'),
  uploadReservePercent: s('UPLOAD_RESERVE_PERCENT', 'number', 0, 'Percentage disk reserve; the effective reserve is the larger of the two (spec 8).'),
  // uploads (spec 2.5, 3.1, 4.4-4.6, 4.12)
  uploadSweepIntervalMs: s('UPLOAD_SWEEP_INTERVAL_MS', 'int', 60_000, 'How often the sweeper expires idle upload sessions and deletes bytes of released ones.'),

  maxEncodedImageBytes: s('MAX_ENCODED_IMAGE_BYTES', 'int', 32 * MB, 'Largest encoded image the media pipeline accepts (spec 2.5).'),
  maxImagePixels: s('MAX_IMAGE_PIXELS', 'int', 64 * 1000 * 1000, 'Largest decoded pixel count the media pipeline accepts (spec 2.5).'),
  // Decode memory admission in the sidecar (spec 4.11, docs/detection.md "Decode memory").
  decodeMemoryBudgetBytes: s('DECODE_MEMORY_BUDGET_BYTES', 'int', 0, 'Memory that detections may hold for their images at once (decoded pixels and overlay, 9 bytes a pixel); 0 = automatic: half of the machine memory (or cgroup limit), at most what is available when the sidecar starts.'),
  decodeQueueMax: s('DECODE_QUEUE_MAX', 'int', 16, 'Most detections waiting for decode memory; one more is refused at once with the retryable ImageMemoryBusy.'),
  decodeQueueWaitMs: s('DECODE_QUEUE_WAIT_MS', 'int', 20_000, 'Longest wait of a detection for decode memory (its deadline may end it sooner); then ImageMemoryBusy with retryAfterSeconds.'),
  modelPrecision: s('MODEL_PRECISION', 'string', 'manifest', '`manifest`: each converted model runs at the precision its pipeline manifest names (`precision: int8` loads `<build>-int8.onnx`; docs/detection.md "int8 models"); `fp32`: every converted model runs in float32.'),
  imageShrinkOnLoad: s('IMAGE_SHRINK_ON_LOAD', 'boolean', true, 'A JPEG sent for detection is decoded at the detector\'s input size for the detector (libjpeg shrink-on-load), its full pixels only for the overlay and for crops of later nodes, decoded beside the detector; false: every image is decoded in full first (docs/detection.md "Decoding at the model\'s size").'),
  inferenceThreads: s('INFERENCE_THREADS', 'int', threadsForMachine(), 'onnxruntime intra-op threads per session; default by machine size: the cores, at most 4 (2 on the 2-core device). The sidecar gives libvips as many.'),
  streamDetectSlots: s('STREAM_DETECT_SLOTS', 'int', 2, 'Stream-task detections the sidecar runs at once, shared by every stream task in turn (docs/cameras-and-stream-tasks.md "Detector scheduling"); 0 = no limit, one per task at once (the previous behaviour).'),
  fileServiceBaseUrl: s('FILE_SERVICE_BASE_URL', 'string', '', 'When set, fullPicture is a URL under this base instead of a data: URI (spec 2.6).'),

  // ── AI host, device status, models, upgrade (spec 4.9, 4.11) ─────────────────────────────────
  logFileMaxBytes: s('LOG_FILE_MAX_BYTES', 'int', 10 * MB, 'Size at which the log file under DATA_DIR/logs rotates.'),
  logFileCount: s('LOG_FILE_COUNT', 'int', 5, 'Rotated log files kept besides the active one; disk use stays below (count + 1) x LOG_FILE_MAX_BYTES.'),
  upgradeProduct: s('UPGRADE_PRODUCT', 'string', 'EdgeAIDevice', 'Product prefix of upgrade package names `<product>-V<x>.<y>.<z>-<md5>.tar.gz` (spec 4.11).'),
  upgradeMaxEntries: s('UPGRADE_MAX_ENTRIES', 'int', 20_000, 'Most entries an upgrade archive may hold.'),
  upgradeMaxExpandedBytes: s('UPGRADE_MAX_EXPANDED_BYTES', 'int', 1024 * MB, 'Largest total size an upgrade archive may expand to.'),
  upgradeProbationMs: s('UPGRADE_PROBATION_MS', 'int', 60_000, 'After an install, how long the new version has to signal readiness and answer `Probe` before the supervisor rolls back.'),
  upgradeTestKillAt: s('UPGRADE_TEST_KILL_AT', 'string', '', 'TEST ONLY: an upgrade step (runtime/upgrade/kill-point.ts) at which the process SIGKILLs its whole process group, as a power cut would; the supervisor must lead its process group. Empty: off.'),

  // ── inference and image detection (spec 4.3, 4.7) ─────────────────────────────────────────
  modelsManifestDir: s('MODELS_MANIFEST_DIR', 'string', '', 'Folder of the pipeline manifests (the algorithms offered); default `models/manifests` of the project.'),
  detectTimeoutMs: s('DETECT_TIMEOUT_MS', 'int', 55_000, 'Deadline of one PTaskDetectPic inference; past it the request fails retryably (clients wait at least 60 s, spec 8).'),
  imageDownloadTimeoutMs: s('IMAGE_DOWNLOAD_TIMEOUT_MS', 'int', 15_000, 'Timeout of an imageUrl download (spec 4.7, 4.11).'),
  imageUrlBlockedNetworks: s('IMAGE_URL_BLOCKED_NETWORKS', 'string', '127.0.0.0/8,::1/128,0.0.0.0/8,::/128,169.254.0.0/16,fe80::/10,224.0.0.0/4,ff00::/8,255.255.255.255/32',
    'Networks (comma-separated CIDRs) an imageUrl and its redirects may not reach: by default the device itself, link-local (cloud metadata), multicast and broadcast; `none`: any network.'),
  imageDownloadMemoryShare: s('IMAGE_DOWNLOAD_MEMORY_SHARE', 'number', 0.1, 'An imageUrl download may use at most this share of the free memory (and never more than maxEncodedImageBytes) (spec 4.11).'),
  faceImportMaxEntries: s('FACE_IMPORT_MAX_ENTRIES', 'int', 20_000, 'Most entries a face-import archive may hold (spec 4.10 File import).'),
  faceImportMaxExpandedBytes: s('FACE_IMPORT_MAX_EXPANDED_BYTES', 'int', 2048 * MB, 'Largest total size a face-import archive may expand to.'),
  galleryFaceAlgorithm: s('GALLERY_FACE_ALGORITHM', 'string', 'face-recognition', 'Algorithm whose recognizer node describes face-gallery images and search images (spec 4.10 Face gallery).'),
  galleryBodyAlgorithm: s('GALLERY_BODY_ALGORITHM', 'string', 'body-recognition', 'Algorithm whose recognizer node describes body-gallery images and search images (spec 4.10 Body gallery).'),
  galleryThingsAlgorithm: s('GALLERY_THINGS_ALGORITHM', 'string', 'things-recognition', 'Algorithm whose recognizer node describes things-gallery images and search images (spec 4.10 Things gallery).'),
  // ── algorithm management (spec 4.10) ───────────────────────────────────────────────────
  algorithmPackageMaxEntries: s('ALGORITHM_PACKAGE_MAX_ENTRIES', 'int', 256, 'Most entries an uploaded algorithm package (zip or tar.gz) may hold.'),
  algorithmPackageMaxExpandedBytes: s('ALGORITHM_PACKAGE_MAX_EXPANDED_BYTES', 'int', 2048 * MB, 'Largest total size an uploaded algorithm package may expand to.'),
  fullPictureRetentionMs: s('FULL_PICTURE_RETENTION_MS', 'int', 60 * 60 * 1000, 'In URL mode (FILE_SERVICE_BASE_URL), how long a fullPicture URL stays valid after its detection, fetched or not (the overlay is rendered on its first fetch).'),

  // ── cameras (spec 4.10 Camera) ───────────────────────────────────────────────────────
  ffmpegPath: s('FFMPEG_PATH', 'string', '', 'ffmpeg executable that decodes camera sources; default the one of the npm package @ffmpeg-installer/linux-x64.'),
  cameraConnectTimeoutMs: s('CAMERA_CONNECT_TIMEOUT_MS', 'int', 10_000, 'A camera source must deliver its first frame within this (also the socket timeout of RTSP and HTTP reads).'),
  cameraStallTimeoutMs: s('CAMERA_STALL_TIMEOUT_MS', 'int', 10_000, 'An online camera without a new frame for this long goes offline and is reconnected.'),
  cameraReconnectMinMs: s('CAMERA_RECONNECT_MIN_MS', 'int', 1000, 'First reconnect delay of an offline camera; doubles per failed attempt.'),
  cameraReconnectMaxMs: s('CAMERA_RECONNECT_MAX_MS', 'int', 30_000, 'Largest reconnect delay of an offline camera.'),
  cameraMonitorFps: s('CAMERA_MONITOR_FPS', 'number', 1, 'Frames per second the camera\'s own reader decodes it at, at its own size, for its status, capture and full-resolution snapshots, whether or not tasks analyse it (each stream task reads it at its own rate); also the poll rate of HTTP snapshot sources.'),
  snapshotFullResolution: s('SNAPSHOT_FULL_RESOLUTION', 'boolean', false, 'true: snapshots of `object.entered` and `alarm.raised` are cut from the camera\'s first frame at its own size at or after the detection (its own reader\'s, raised to SNAPSHOT_BURST_FPS while it waits); false: from the analysed frame, at the analysis size (docs/cameras-and-stream-tasks.md "Snapshots").'),
  snapshotMaxSkewMs: s('SNAPSHOT_MAX_SKEW_MS', 'int', 1000, 'A snapshot\'s frame at the camera\'s own size may be at most this far (ms) after the analysed frame; it is waited for until then, else the snapshot is the analysed frame (docs/cameras-and-stream-tasks.md "Snapshots").'),
  snapshotBurstFps: s('SNAPSHOT_BURST_FPS', 'number', 10, 'Frames per second the camera\'s own reader (RTSP) delivers while a snapshot waits for its next frame at the camera\'s size, CAMERA_MONITOR_FPS the rest of the time (docs/cameras-and-stream-tasks.md "Snapshots").'),
  streamRegionDetection: s('STREAM_REGION_DETECTION', 'boolean', true, 'Stream tasks with motion gating detect crops around the motion regions and tracked objects instead of the whole frame where their `regionDetection` is on (the default); false: every task detects whole frames (docs/cameras-and-stream-tasks.md "Detection on motion regions").'),
  cameraVideoMaxBytes: s('CAMERA_VIDEO_MAX_BYTES', 'int', 2048 * MB, 'Largest video file a file camera accepts (upload purpose `video`).'),
  // ── recording and live view (spec 4.10 System: recording, Live stream) ─────────────────
  recordRetentionDays: s('RECORD_RETENTION_DAYS', 'number', 7, 'Default retention of recorded clips in days (0 = kept until the budget or the disk reserve needs the space); System/SetRecordParam stores another value.'),
  recordBudgetBytes: s('RECORD_BUDGET_BYTES', 'int', 0, 'Default disk budget of all recordings together, ring segments included (0 = only the disk safety reserve limits them); System/SetRecordParam stores another value.'),
  recordSegmentSeconds: s('RECORD_SEGMENT_SECONDS', 'number', 4, 'Length of the segments a recording camera writes, cut at the next key frame: the granularity of pre-roll and of clip edges. Each segment file costs CPU of its own (docs/recording-and-live-view.md "Recording").'),
  recordMaxClipSeconds: s('RECORD_MAX_CLIP_SECONDS', 'int', 600, 'Longest event clip: a visit that lasts longer is closed this long after its start.'),
  recordContinuousChunkSeconds: s('RECORD_CONTINUOUS_CHUNK_SECONDS', 'int', 300, 'Continuous recording is kept as clips of about this length.'),
  recordHeadroomBytes: s('RECORD_HEADROOM_BYTES', 'int', 32 * MB, 'Free space above the disk safety reserve (spec 8) and upload reservations that recording keeps: below it the oldest footage is deleted, and with none left recording is suspended.'),
  recordCheckIntervalMs: s('RECORD_CHECK_INTERVAL_MS', 'int', 1000, 'How often recording checks free space, the budget and retention while it writes.'),
  liveIdleTimeoutMs: s('LIVE_IDLE_TIMEOUT_MS', 'int', 30_000, 'A live view session without LiveStream/keepAlive for this long ends (its stream closes).'),
  liveMaxViewersPerCamera: s('LIVE_MAX_VIEWERS_PER_CAMERA', 'int', 4, 'Most live view sessions open on one camera (LiveViewerLimit beyond).'),
  liveMaxSessions: s('LIVE_MAX_SESSIONS', 'int', 16, 'Most live view sessions open on the device (LiveViewerLimit beyond).'),
  clipLinkTtlMs: s('CLIP_LINK_TTL_MS', 'int', 10 * 60 * 1000, 'Validity of a clip playback link (File/ClipPlayUrl): a `<video>` element cannot send an mtk.'),

  wsPort: s('WS_PORT', 'int', 9000, 'Event WebSocket listener port (spec 6).'),
  wsHost: s('WS_HOST', 'string', '0.0.0.0', 'Event WebSocket listener address (spec 6).'),

  // ── events: outbox, WebSocket, MQTT, webhook (spec 6). MQTT and webhook rows are the
  // defaults; the System endpoints store overrides in the database (applied without restart).
  dbSynchronous: s('DB_SYNCHRONOUS', 'string', 'NORMAL', 'SQLite `synchronous` of the embedded database (WAL mode): NORMAL survives a killed process, FULL also a power loss at an fsync per commit.'),
  wsMaxClients: s('WS_MAX_CLIENTS', 'int', 64, 'Event WebSocket clients served at once; one more is closed with code 1013 (try again later).'),
  wsMaxBufferedBytes: s('WS_MAX_BUFFERED_BYTES', 'int', 4 * MB, 'A WebSocket client with more unsent bytes than this (it does not read) is disconnected.'),
  eventRetentionMs: s('EVENT_RETENTION_MS', 'int', 7 * 24 * 60 * 60 * 1000, 'Events older than this are pruned from the outbox.'),
  eventRetentionMaxRows: s('EVENT_RETENTION_MAX_ROWS', 'int', 200_000, 'At most this many events are kept in the outbox (oldest pruned first).'),
  eventPollMs: s('EVENT_POLL_MS', 'int', 500, 'Channels re-read the outbox at least this often (events written by other processes or in transactions).'),
  mqttUrl: s('MQTT_URL', 'string', '', 'Broker URL (mqtt://, mqtts://, ws://, wss://); empty disables MQTT.'),
  mqttClientId: s('MQTT_CLIENT_ID', 'string', '', 'MQTT client id and device id in topics; default `cwai-<hostname>`.'),
  mqttUsername: s('MQTT_USERNAME', 'string', '', 'MQTT user name.'),
  mqttPassword: s('MQTT_PASSWORD', 'string', '', 'MQTT password (never logged, never returned by the System endpoints).'),
  mqttTopicPrefix: s('MQTT_TOPIC_PREFIX', 'string', 'cwai', 'First topic level: topics are `<prefix>/<clientId>/...`.'),
  mqttCaFile: s('MQTT_CA_FILE', 'string', '', 'PEM CA bundle for mqtts/wss brokers.'),
  mqttCertFile: s('MQTT_CERT_FILE', 'string', '', 'PEM client certificate (mutual TLS).'),
  mqttKeyFile: s('MQTT_KEY_FILE', 'string', '', 'PEM client key (mutual TLS).'),
  mqttRejectUnauthorized: s('MQTT_REJECT_UNAUTHORIZED', 'boolean', true, 'Verify the broker certificate.'),
  mqttReconnectMinMs: s('MQTT_RECONNECT_MIN_MS', 'int', 500, 'First reconnect delay; doubles per failed attempt.'),
  mqttReconnectMaxMs: s('MQTT_RECONNECT_MAX_MS', 'int', 30_000, 'Largest reconnect delay.'),
  mqttMaxRequestsInFlight: s('MQTT_MAX_REQUESTS_IN_FLIGHT', 'int', 16, 'MQTT requests run at once; more are answered `api.error.MqttBusy` (retryable) and not run (0: none runs).'),
  mqttHaDiscovery: s('MQTT_HA_DISCOVERY', 'boolean', true, 'Publish Home Assistant MQTT discovery configs and entity states while MQTT is configured (docs/events.md "Home Assistant").'),
  mqttHaDiscoveryPrefix: s('MQTT_HA_DISCOVERY_PREFIX', 'string', 'homeassistant', 'Home Assistant\'s discovery prefix: configs go to `<prefix>/<component>/<clientId>/<object>/config`, its birth message is read on `<prefix>/status`.'),
  mqttHaRefreshMs: s('MQTT_HA_REFRESH_MS', 'int', 5000, 'How often the Home Assistant configs and states are compared with the cameras, tasks and policies (added, renamed, deleted) and the device health is published.'),
  mqttHaImageIntervalMs: s('MQTT_HA_IMAGE_INTERVAL_MS', 'int', 10_000, 'How often each online camera\'s latest frame is published to its Home Assistant camera image topic (0: never).'),
  mqttSummaryIntervalMs: s('MQTT_SUMMARY_INTERVAL_MS', 'int', 10_000, 'How often the device publishes its retained fleet summary (`<prefix>/<clientId>/summary`: uptime, cameras, tasks, alarms, disk) that the console\'s Fleet view reads.'),
  fleetPushMaxBytesPerSecond: s('FLEET_PUSH_MAX_BYTES_PER_SECOND', 'int', 0, 'Upload rate of each device\'s copy of a package pushed from the console\'s Fleet view, in bytes per second (0: as fast as the network goes); keeps a push from filling a shared link. A throttled upload sends one second of bytes per chunk (at most a quarter of the target\'s upload idle timeout), so its session never expires.'),
  advertisedUrl: s('ADVERTISED_URL', 'string', '', 'HTTP address of the device as other hosts reach it (NAT, a published container port), published in the MQTT registration for fleet commands; empty: the bound address, or each interface address.'),
  webhookUrls: s('WEBHOOK_URLS', 'string', '', 'Comma-separated URLs that receive every event as a signed JSON POST; empty disables the webhook.'),
  webhookSecret: s('WEBHOOK_SECRET', 'string', '', 'HMAC-SHA256 key of the webhook signature (never logged, never returned).'),
  webhookTimeoutMs: s('WEBHOOK_TIMEOUT_MS', 'int', 5000, 'Timeout of one webhook delivery attempt.'),
  webhookMaxAttempts: s('WEBHOOK_MAX_ATTEMPTS', 'int', 8, 'Attempts per event and URL before it goes to the dead letters.'),
  webhookBackoffBaseMs: s('WEBHOOK_BACKOFF_BASE_MS', 'int', 1000, 'Delay after the first failed attempt; doubles per attempt.'),
  webhookBackoffMaxMs: s('WEBHOOK_BACKOFF_MAX_MS', 'int', 60_000, 'Largest delay between attempts.'),

  // ── network (spec 4.10 Network) ─────────────────────────────────────────────────────────
  networkNamespace: s('NETWORK_NAMESPACE', 'string', '', 'Run every network command inside this network namespace (`ip netns exec`); empty = the host. For tests and containers.'),
  networkBackend: s('NETWORK_BACKEND', 'string', '', 'How network changes are written: empty = detect the host\'s (NetworkManager, systemd-networkd, ifupdown), or one of `networkmanager`, `systemd-networkd`, `ifupdown`, `iproute2-runtime` (kernel only, lost at reboot, no DHCP).'),
  networkConfirmTimeoutMs: s('NETWORK_CONFIRM_TIMEOUT_MS', 'int', 120_000, 'A network change not confirmed within this time is rolled back (a request may choose 10 s to 1 h).'),

  // ── audio (spec 4.10 Audio) and system settings (spec 4.10 System) ─────────────────────
  audioMaxDurationMs: s('AUDIO_MAX_DURATION_MS', 'int', 120_000, 'Longest audio file the device accepts (decoded duration).'),
  audioMaxFileBytes: s('AUDIO_MAX_FILE_BYTES', 'int', 50 * MB, 'Largest audio upload (purpose `audio`) the device accepts.'),
  audioFfmpegTimeoutMs: s('AUDIO_FFMPEG_TIMEOUT_MS', 'int', 60_000, 'Longest one ffmpeg step on an audio file may take (probe, normalize, decode, convert).'),
  timeService: s('TIME_SERVICE', 'string', '', 'Where NTP servers are written: empty = detect the host\'s running service (systemd-timesyncd, chrony), or one of `systemd-timesyncd`, `chrony`, `none` (refuse).'),
  logoMaxBytes: s('LOGO_MAX_BYTES', 'int', 1 * MB, 'Largest logo upload (purpose `logo`; PNG, JPEG or SVG).'),
  // ── backup, restore and factory reset (spec 4.10 System; docs/system.md "Backup, restore and factory reset") ──
  backupMaxEntries: s('BACKUP_MAX_ENTRIES', 'int', 200_000, 'Most entries a backup archive may hold (checked before a restore changes anything).'),
  backupMaxExpandedBytes: s('BACKUP_MAX_EXPANDED_BYTES', 'int', 8192 * MB, 'Largest total size a backup archive may expand to (checked while it is read).'),
  backupRetentionMs: s('BACKUP_RETENTION_MS', 'int', 60 * 60 * 1000, 'How long a produced backup stays on the device for its (ranged) download; a newer backup replaces it at once.'),
  factoryResetTokenTtlMs: s('FACTORY_RESET_TOKEN_TTL_MS', 'int', 60_000, 'Lifetime of the confirmation token that RequestFactoryReset answers; FactoryReset with an older one is refused.'),
  // Schedules (runtime/schedules, docs/alarms-and-schedules.md "Schedules").
  scheduleClockStart: s('SCHEDULE_CLOCK_START', 'string', '', 'For tests: schedules read a clock that starts at this ISO 8601 instant when the device starts and runs at SCHEDULE_CLOCK_RATE times real speed (a window boundary or a daylight-saving night on purpose); empty = the device\'s clock.'),
  scheduleClockRate: s('SCHEDULE_CLOCK_RATE', 'int', 1, 'For tests, with SCHEDULE_CLOCK_START: how many times faster than real time that clock runs (1–60), so that a window comes and goes in seconds.'),
} as const

type Settings = typeof settings
type ValueOf<S> = S extends Setting<infer K> ? (K extends 'string' ? string : K extends 'boolean' ? boolean : number) : never
export type Config = { readonly [K in keyof Settings]: ValueOf<Settings[K]> } & {
  /** Absolute form of dataDir. */
  readonly dataPath: string
  /** Effective database URL. */
  readonly databaseUrl: string
}

const parse = (setting: Setting, raw: unknown, source: string): string | number | boolean => {
  if (setting.kind === 'string') return String(raw)
  if (setting.kind === 'boolean') {
    if (typeof raw === 'boolean') return raw
    const text = String(raw).toLowerCase()
    if (['1', 'true', 'yes', 'on'].includes(text)) return true
    if (['0', 'false', 'no', 'off'].includes(text)) return false
    throw new Error(`${source}: expected a boolean, got ${JSON.stringify(raw)}`)
  }
  const value = typeof raw === 'number' ? raw : Number(String(raw).trim())
  if (!Number.isFinite(value) || value < 0 || (setting.kind === 'int' && !Number.isInteger(value)))
    throw new Error(`${source}: expected a non-negative ${setting.kind === 'int' ? 'integer' : 'number'}, got ${JSON.stringify(raw)}`)
  return value
}

/**
 * Reads the configuration. `overrides` (used by tests) win over everything.
 * A malformed value is a start-up error naming the variable, never a silent default.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Record<keyof Settings, unknown>> = {}): Config {
  let file: Record<string, unknown> = {}
  if (env.CONFIG_FILE) {
    try {
      file = JSON.parse(readFileSync(env.CONFIG_FILE, 'utf8'))
    } catch (error) {
      throw new Error(`CONFIG_FILE ${env.CONFIG_FILE}: ${(error as Error).message}`)
    }
  }
  const out: Record<string, unknown> = {}
  for (const [key, setting] of Object.entries(settings) as [keyof Settings, Setting][]) {
    if (key in overrides) out[key] = overrides[key]
    else if (env[setting.env] !== undefined && env[setting.env] !== '') out[key] = parse(setting, env[setting.env], setting.env)
    else if (key in file) out[key] = parse(setting, file[key], `${env.CONFIG_FILE}#${key}`)
    else out[key] = setting.default
  }
  const dataPath = path.resolve(String(out.dataDir))
  const databaseUrl = String(out.libsqlUrl) || `file:${path.join(dataPath, 'device.db')}`
  return Object.freeze({ ...out, dataPath, databaseUrl }) as Config
}
