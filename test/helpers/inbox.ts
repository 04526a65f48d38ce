/**
 * A list of received items (MQTT messages, WebSocket frames, webhook deliveries) that tests can
 * wait on: `waitFor` resolves with the first item, seen so far or later, that matches.
 */
export interface Inbox<T> {
  items: T[]
  push(item: T): void
  waitFor(match: (item: T) => boolean, timeoutMs: number): Promise<T>
}

export function createInbox<T>(what: string, describe: (items: T[]) => string): Inbox<T> {
  const items: T[] = []
  const waiters = new Set<() => void>()
  return {
    items,
    push(item) {
      items.push(item)
      for (const waiter of waiters) waiter()
    },
    waitFor(match, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = items.find(match)
          if (found === undefined) return
          waiters.delete(check)
          clearTimeout(timer)
          resolve(found)
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`no matching ${what} within ${timeoutMs} ms; got ${describe(items)}`))
        }, timeoutMs)
        waiters.add(check)
        check()
      })
    },
  }
}
