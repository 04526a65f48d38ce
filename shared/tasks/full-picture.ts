import path from 'node:path'
import type { Config } from '../config.ts'

/**
 * spec 2.6 `fullPicture` in URL mode: where the device keeps the annotated pictures it serves,
 * their ids, and the route that serves them (the runtime writes them, FullPicture reads them).
 */
export const picturesDir = (config: Pick<Config, 'dataPath'>) => path.join(config.dataPath, 'pictures')
export const PICTURE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
export const FULL_PICTURE_ROUTE = '/gtw/cwai/File/FullPicture'
