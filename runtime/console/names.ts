import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { DeviceClient } from '../client/client.ts'
import { GalleryClient } from '../client/galleries.ts'
import type { CameraView, StreamTaskStatus } from '../client/types.ts'
import type { PolicyView } from '../../shared/alarms/types.ts'

/** What a page names things by: the device's lists of cameras, stream tasks, alarm policies and face galleries. */
export interface NameLists {
  cameras: CameraView[]
  tasks: StreamTaskStatus[]
  policies: PolicyView[]
  galleries: { galleryId: string; name: string }[]
}

/** The names of things an event or a list refers to by id; an id no list knows is shown as it is. */
export interface Names extends NameLists {
  /** Each: the name the device's list gives, else `fallback` (e.g. the name an event carried when it was raised), else the id. */
  camera(id: unknown, fallback?: string | null): string
  task(id: unknown, fallback?: string | null): string
  policy(id: unknown, fallback?: string | null): string
  gallery(id: unknown, fallback?: string | null): string
  /** Reads the lists again (e.g. an event names a task created after they were read). */
  refresh(): void
}

const EMPTY: NameLists = { cameras: [], tasks: [], policies: [], galleries: [] }
/** A re-read for an unknown id waits until the last read is this old (1 s at the least). */
const UNKNOWN_REFRESH_MS = 5000

/**
 * The names of cameras, tasks (their `taskName`, else the taskId), alarm policies and face
 * galleries, read from the device once, again when an id turns up that no list knows (once per id, within 1 s), so that pages
 * show names, never raw ids (docs/console-and-cli.md "Review"). A list the session may not
 * read stays empty; its ids are shown as they are.
 */
export function useNames(client: DeviceClient): Names {
  const [lists, setLists] = useState<NameLists>(EMPTY)
  const lastRead = useRef(0)
  // Ids no list knew when first met: each makes the lists be read again, once.
  const asked = useRef(new Set<string>())
  const read = () => {
    lastRead.current = Date.now()
    const galleries = new GalleryClient(client, 'face')
    Promise.all([
      client.cameraPage({ pageSize: 500 }).then((p) => p.rows, () => [] as CameraView[]),
      client.streamTaskPage().then((p) => p.rows, () => [] as StreamTaskStatus[]),
      client.call('/gtw/cwai/AlarmStrage/page', { pageNum: 1, pageSize: 500 }).then((p) => p.rows, () => [] as PolicyView[]),
      galleries.galleries().then((p) => p.rows, () => []),
    ]).then(([cameras, tasks, policies, galleries]) => setLists({ cameras, tasks, policies, galleries }))
  }
  useEffect(read, [client])
  return useMemo(() => {
    const unknown = (id: string) => {
      if (asked.current.has(id)) return
      asked.current.add(id)
      // Several new ids at once (a page of events) make one re-read.
      if (Date.now() - lastRead.current > UNKNOWN_REFRESH_MS) read()
      else setTimeout(() => { if (Date.now() - lastRead.current > UNKNOWN_REFRESH_MS / 5) read() }, UNKNOWN_REFRESH_MS / 5)
    }
    const lookup = <T>(rows: T[], key: keyof T, name: (row: T) => string) => (id: unknown, fallback?: string | null) => {
      if (id === null || id === undefined || id === '') return ''
      const row = rows.find((r) => r[key] === id)
      if (!row) unknown(`${String(key)}:${String(id)}`)
      return row ? name(row) : fallback || String(id)
    }
    return {
      ...lists,
      camera: lookup(lists.cameras, 'cameraId', (c) => c.cameraName),
      task: lookup(lists.tasks, 'taskId', (t) => t.taskName ?? t.taskId),
      policy: lookup(lists.policies, 'policyId', (p) => p.policyName),
      gallery: lookup(lists.galleries, 'galleryId', (g) => g.name),
      refresh: read,
    }
  }, [lists])
}
