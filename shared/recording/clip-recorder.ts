/**
 * The "record a clip" action of alarm policies (spec 4.10 Linkage / alarm policy): what the
 * recording area offers alarms on `ctx.recording`. A camera whose recording mode is off keeps no
 * ring of footage, so its alarms get no clip (AlarmActionUnavailable).
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
  /** The task and the one tracked object the alarm is raised on (none for an alarm on several): the clip is that object's clip. */
  taskId?: string | null
  objectId?: string | null
}

export interface ClipRecorder {
  /**
   * Starts keeping a clip around the alarm; answers at once with the URL the clip is served at
   * (`clipUrl` of the alarm, playable once the post-roll is written).
   */
  recordEvent(request: ClipRequest): Promise<{ clipUrl: string }>
  /** Whether the camera keeps the footage a clip is cut from (its recording mode is not off). */
  records(cameraId: string): boolean
}
