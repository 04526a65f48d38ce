/**
 * Resolves with `lookup()` once `match` holds for it, checked now and each time the owner calls
 * the watchers in `watchers` (on every change it sees); null after `timeoutMs`. The fleet's
 * broker views (the CLI's and the device's) wait on their device lists with it.
 */
export function waitForMatch<T>(watchers: Set<() => void>, lookup: () => T | null, match: (value: T) => boolean, timeoutMs: number): Promise<T | null> {
  return new Promise((resolve) => {
    const check = () => {
      const value = lookup()
      if (value !== null && match(value)) finish(value)
    }
    const finish = (value: T | null) => {
      clearTimeout(timer)
      watchers.delete(check)
      resolve(value)
    }
    const timer = setTimeout(() => finish(null), timeoutMs)
    watchers.add(check)
    check()
  })
}
