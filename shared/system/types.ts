import type { Identity } from '../handler.ts'

/**
 * System settings (spec 4.10 System, `/gtw/cwai/System/`): the device's time (zone, NTP
 * servers, drift), the JPEG quality of the pictures it makes, its logo, and debug logging.
 * Each has its own service on `ctx` (runtime/system/).
 */

// ── time ────────────────────────────────────────────────────────────────────────────
/**
 * The device's time zone, for every area that works in local time (schedules): one getter,
 * and a listener told when it changes. The zone is an IANA name (shared/system/time-zone.ts).
 */
export interface DeviceTimeZone {
  timeZone(): string
  /** Calls `listener` with the new zone after every change; answers a function that stops it. */
  onTimeZoneChange(listener: (timeZone: string) => void): () => void
}

/** NTP servers the device writes at most. */
export const MAX_NTP_SERVERS = 8

export type TimeServiceType = 'systemd-timesyncd' | 'chrony'

export interface TimeStatus {
  timeZone: string
  /** The device's clock, ms since epoch. */
  now: number
  /** The same instant as local time in `timeZone`, ISO 8601 with its offset. */
  localTime: string
  utcOffsetMinutes: number
  ntpServers: string[]
  /** The host's time service NTP servers are written to; null with the reason when there is none. */
  timeService: { type: TimeServiceType | null; reason: string | null }
}

export interface DriftSample {
  server: string
  /** Server clock minus device clock (ms): positive when the device is behind. */
  offsetMs: number | null
  /** Round trip of the exchange (ms). */
  delayMs: number | null
  stratum: number | null
  error: string | null
}

export interface TimeService extends DeviceTimeZone {
  status(): Promise<TimeStatus>
  /** Validates everything first; writes NTP servers to the host's time service (or refuses), then stores. */
  set(input: { timeZone?: string; ntpServers?: string[] }): Promise<TimeStatus>
  /** One SNTP exchange with each configured NTP server (RFC 4330). */
  drift(): Promise<{ measuredAt: number; samples: DriftSample[] }>
}

// ── image quality ───────────────────────────────────────────────────────────────────
/** The JPEGs the device makes: detection overlays (fullPicture), stream-task snapshots, camera captures. */
export const JPEG_KINDS = ['overlay', 'snapshot', 'capture'] as const
export type JpegKind = (typeof JPEG_KINDS)[number]

export interface JpegSettings {
  /** libjpeg quality 1-100. */
  quality: number
  /** Longest side in pixels; a larger picture is scaled down (aspect kept); 0 = as it is. */
  maxSide: number
}

export type ImageQuality = Record<JpegKind, JpegSettings>

export interface ImageQualityService {
  /** The settings in force now (read at every encode, so a change applies to the next picture). */
  current(): ImageQuality
  set(change: Partial<Record<JpegKind, Partial<JpegSettings>>>): Promise<ImageQuality>
}

// ── logo ────────────────────────────────────────────────────────────────────────────
export const LOGO_UPLOAD_PURPOSE = 'logo'
export const LOGO_ROUTE = '/gtw/cwai/System/Logo'

export interface LogoInfo {
  /** false: the shipped default logo. */
  custom: boolean
  contentType: 'image/png' | 'image/jpeg' | 'image/svg+xml'
  width: number
  height: number
  sizeBytes: number
  updatedAt: number | null
  /** Authenticated GET of the logo. */
  url: string
}

export interface LogoService {
  info(): Promise<LogoInfo>
  /** Claims a `logo` upload: PNG or JPEG as they are, SVG sanitised (`removed` lists what was taken out). */
  set(uploadId: string, identity: Identity): Promise<LogoInfo & { removed: string[] }>
  reset(): Promise<LogoInfo>
  /** The logo's bytes to serve, custom or default. */
  image(): Promise<{ bytes: Buffer; contentType: LogoInfo['contentType']; updatedAt: number | null }>
}

// ── debug ───────────────────────────────────────────────────────────────────────────
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export interface DebugSettings {
  /** The device's log level. */
  logLevel: LogLevel
  /** Per-area debug switches: an area switched on logs at debug even when logLevel is higher. */
  areas: { name: string; debug: boolean }[]
}

export interface LogFileInfo {
  name: string
  sizeBytes: number
  modifiedAt: number
  /** The file being written now (it only grows: ranges of it stay valid). */
  active: boolean
}

export interface DebugService {
  settings(): DebugSettings
  /** Applied at once, to every logger of the process, and stored. Unknown areas → InvalidParam. */
  set(change: { logLevel?: LogLevel; areas?: Record<string, boolean> }): Promise<DebugSettings>
  logFiles(): LogFileInfo[]
  /** Absolute path of a log file by name (LogFileNotFound). */
  logFile(name?: string): string
}
