/** A camera's rolls when SetRecordParam names none (spec 4.10 System: recording); the console shows them too. */
export const DEFAULT_PRE_ROLL_SECONDS = 5
export const DEFAULT_POST_ROLL_SECONDS = 5
