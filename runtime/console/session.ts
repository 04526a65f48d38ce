import { DeviceClient } from '../client/client.ts'
import type { ResumeRecord, ResumeStore, UploadSource } from '../client/upload.ts'

const SESSION_KEY = 'device-console.session'
const RESUME_PREFIX = 'device-console.upload.'
const NOTICE_KEY = 'device-console.notice'

export interface StoredSession {
  mtk: string
  accountName: string
}

/** The signed-in session survives a reload of the tab, not the closing of the browser. */
export const sessionStore = {
  load(): StoredSession | null {
    try {
      const value = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null')
      return typeof value?.mtk === 'string' ? value : null
    } catch {
      return null
    }
  },
  save(session: StoredSession) {
    sessionStorage.setItem(SESSION_KEY, JSON.stringify(session))
  },
  clear() {
    sessionStorage.removeItem(SESSION_KEY)
  },
}

/**
 * Why the sign-in screen shows (signed out, session ended), kept until the next sign-in: a 401
 * may arrive just before a reload (a query in flight when the session was revoked), and the
 * reloaded tab must still say why it asks for a sign-in.
 */
export const noticeStore = {
  load(): string | null {
    return sessionStorage.getItem(NOTICE_KEY)
  },
  save(notice: string) {
    sessionStorage.setItem(NOTICE_KEY, notice)
  },
  clear() {
    sessionStorage.removeItem(NOTICE_KEY)
  },
}

/**
 * Resume identities in localStorage (spec 4.12): kept until the upload completes or is
 * cancelled, so that a dropped connection or a reload continues the same upload session.
 */
export const browserResumeStore: ResumeStore & { drain(): ResumeRecord[] } = {
  async load(key) {
    try {
      return JSON.parse(localStorage.getItem(RESUME_PREFIX + key) ?? 'null') as ResumeRecord | null
    } catch {
      return null
    }
  },
  async save(key, record) {
    localStorage.setItem(RESUME_PREFIX + key, JSON.stringify(record))
  },
  async remove(key) {
    localStorage.removeItem(RESUME_PREFIX + key)
  },
  /**
   * spec 5.3: after a 401 the client signs in again and creates a new upload session; the
   * old identities are removed and returned, so that their sessions can be cancelled.
   */
  drain() {
    const records: ResumeRecord[] = []
    for (const key of Object.keys(localStorage)) {
      if (!key.startsWith(RESUME_PREFIX)) continue
      try {
        const record = JSON.parse(localStorage.getItem(key) ?? 'null') as ResumeRecord | null
        if (record) records.push(record)
      } catch {
        // unreadable: dropped
      }
      localStorage.removeItem(key)
    }
    return records
  },
}

/** The resume key of a browser file: account, name, size and modification time. */
export const resumeKeyOf = (account: string, file: File) => `${account}|${file.name}|${file.size}|${file.lastModified}`

/** A browser file as the upload's source. */
export const fileSource = (file: File): UploadSource => ({ name: file.name, size: file.size, slice: (start, end) => file.slice(start, end) })

/** One client for the console's own origin: the console talks to no host but the device. */
export function createClient(onUnauthorized: () => void): DeviceClient {
  return new DeviceClient({ baseUrl: '', mtk: sessionStore.load()?.mtk ?? null, onUnauthorized })
}
