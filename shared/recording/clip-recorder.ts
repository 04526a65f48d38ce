/**
 * The "record a clip" action of alarm policies (spec 4.10 Linkage / alarm policy): what the
 * recording area offers alarms on `ctx.recording`. Alarm policies use it when it is there and
 * refuse a clip action (AlarmActionUnavailable) when it is not.
 */
export interface ClipRequest {
  cameraId: string
  /** The alarm's id (`alarmId` in the alarm.raised payload). */
  eventId: string
  /** Seconds of footage before `at` and after it. */
  preRollS: number
  postRollS: number
  /** The alarm's frame time, ms since epoch. */
  at: number
}

export interface ClipRecorder {
  /**
   * Starts keeping a clip around the alarm; answers at once with the URL the clip is served at
   * (`clipUrl` of the alarm, playable once the post-roll is written).
   */
  recordEvent(request: ClipRequest): Promise<{ clipUrl: string }>
}

/** `ctx.recording` when it offers clips for alarms. */
export const clipRecorderOf = (recording: unknown): ClipRecorder | null =>
  typeof (recording as Partial<ClipRecorder> | undefined)?.recordEvent === 'function' ? recording as ClipRecorder : null
