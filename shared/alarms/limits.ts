/** Limits of alarm policies (docs/alarms-and-schedules.md "Alarm policies"); plain data, so the console can use them without the schemas. */
export const POLICY_LIMITS = { actions: 8, maxDwellS: 86_400, maxCooldownS: 86_400, maxCount: 100, defaultCooldownS: 60 } as const
/** Deliveries of the webhook and MQTT actions: attempts, the first retry's delay (doubling), one attempt's time limit. */
export const ACTION_DELIVERY = { attempts: 3, backoffMs: 1000, timeoutMs: 5000 } as const
/** Pre- and post-roll of the clip action (seconds). */
export const CLIP_LIMITS = { maxPreRollS: 60, maxPostRollS: 300, defaultPreRollS: 5, defaultPostRollS: 10 } as const
