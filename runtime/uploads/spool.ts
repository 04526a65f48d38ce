import path from 'node:path'
import { removeFilesStartingWith } from '../../shared/leftover-files.ts'

/**
 * Spool files of `uploadTemp` (runtime/uploads/multipart.ts): a file part that arrives before
 * the fields it needs is kept here until they are known, and deleted when its request ends.
 */
export const spoolDirOf = (dataPath: string): string => path.join(dataPath, 'upload-spool')

export const SPOOL_FILE_PREFIX = 'spool-'

/**
 * Deletes the spool files a process killed mid-request left behind. Call at start-up, before
 * requests are served: one runtime owns a data folder at a time (the supervisor starts the
 * next one only after the previous exited), so no spool file is in use then.
 */
export const removeOrphanSpoolFiles = (spoolDir: string): Promise<number> => removeFilesStartingWith(spoolDir, SPOOL_FILE_PREFIX)
