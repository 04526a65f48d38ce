import type { MessageItem } from '../../shared/errors/index.ts'
import type { StreamTaskStatus } from '../../shared/streams/types.ts'

/** The device routes the capacity runner calls, over HTTP with a signed-in `mtk`. */

export type Answer = { resCode: number; resData?: any; resMsg: MessageItem[] }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export function deviceClient(url: string, mtk: string) {
  const call = async (route: string, body: unknown): Promise<Answer> => {
    const response = await fetch(url + route, { method: 'POST', headers: { 'content-type': 'application/json', mtk }, body: JSON.stringify(body) })
    return await response.json() as Answer
  }
  const post = async (route: string, body: unknown) => {
    const answer = await call(route, body)
    if (answer.resCode !== 1) throw new Error(`${route}: ${JSON.stringify(answer.resMsg)}`)
    return answer.resData
  }
  return {
    call,
    post,
    /** Adds an RTSP camera; a just-started mount may answer its first session with an error, and the device says when to retry. */
    async addRtspCamera(cameraName: string, rtspUrl: string, why: () => string): Promise<string> {
      for (let attempt = 1; ; attempt++) {
        const answer = await call('/gtw/cwai/Camera/add', { cameraName, sourceType: 'rtsp', url: rtspUrl })
        if (answer.resCode === 1) return answer.resData.cameraId as string
        const item = answer.resMsg[0]
        if (!item?.retryable || attempt >= 5) throw new Error(`Camera/add ${rtspUrl} (${why()}): ${JSON.stringify(answer.resMsg)}`)
        await sleep(1000 * (item.retryAfterSeconds ?? 1))
      }
    },
    /** Every stream task's status (Task/page), by taskId. */
    async statuses(): Promise<Map<string, StreamTaskStatus>> {
      const page = await post('/gtw/cwai/Task/page', { pageNum: 1, pageSize: 500 })
      return new Map((page.rows as StreamTaskStatus[]).map((s) => [s.taskId, s]))
    },
    /** When each of `taskIds` raised `object.entered` within [start, end] (Event/EventPage, ms since epoch). */
    async enteredTimes(taskIds: string[], start: number, end: number): Promise<Map<string, number[]>> {
      const times = new Map(taskIds.map((id) => [id, [] as number[]]))
      for (let pageNum = 1; ; pageNum++) {
        const page = await post('/gtw/cwai/Event/EventPage', {
          pageNum, pageSize: 500, kinds: ['object.entered'], startTime: new Date(start).toISOString(), endTime: new Date(end + 1).toISOString(),
        })
        for (const row of page.rows) times.get(row.payload.taskId)?.push(Date.parse(row.time))
        if (page.rows.length < 500) return times
      }
    },
  }
}

export type DeviceClient = ReturnType<typeof deviceClient>
