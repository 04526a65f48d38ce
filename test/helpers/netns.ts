import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'

/**
 * A network namespace with a veth pair inside it, for network tests that must never touch the
 * host's network. Needs root (`ip netns add`); `remove()` deletes the namespace (and with it
 * the pair) and its /etc/netns folder.
 */
export interface TestNamespace {
  name: string
  /** The adapter the tests configure, and its peer. */
  adapter: string
  peer: string
  ip(...args: string[]): string
  /** Writes /etc/netns/<name>/resolv.conf, which `ip netns exec` shows as /etc/resolv.conf. */
  writeResolvConf(text: string): void
  remove(): void
}

export const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0

export function createNamespace(): TestNamespace {
  const name = `cwai-test-${randomBytes(4).toString('hex')}`
  const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' })
  ip('netns', 'add', name)
  const inside = (...args: string[]) => ip('-n', name, ...args)
  inside('link', 'add', 'veth-dev', 'type', 'veth', 'peer', 'name', 'veth-peer')
  inside('link', 'set', 'lo', 'up')
  inside('link', 'set', 'veth-dev', 'up')
  inside('link', 'set', 'veth-peer', 'up')
  const etc = `/etc/netns/${name}`
  const etcParentExisted = existsSync('/etc/netns')
  return {
    name,
    adapter: 'veth-dev',
    peer: 'veth-peer',
    ip: inside,
    writeResolvConf(text) {
      mkdirSync(etc, { recursive: true })
      writeFileSync(`${etc}/resolv.conf`, text)
    },
    remove() {
      try { ip('netns', 'del', name) } catch { /* already gone */ }
      rmSync(etc, { recursive: true, force: true })
      // leave /etc as it was; another namespace's folder in it keeps it (rmdir refuses)
      if (!etcParentExisted) try { rmdirSync('/etc/netns') } catch { /* not empty or gone */ }
    },
  }
}
