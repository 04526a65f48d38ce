import type { AdapterConfig } from '../../../shared/network/schemas.ts'

/**
 * /etc/network/interfaces (ifupdown) as text: which `iface <name> inet <method>` stanza an
 * adapter has, and the file with one adapter's IPv4 stanza replaced. Pure, so it is tested on
 * strings; the backend (ifupdown.ts) reads and writes the file.
 */

// A stanza's option lines run until a blank line or the next line with a top-level keyword.
const STANZA = /^(iface|auto|allow-[\w-]+|mapping|source|source-directory|no-auto-down|no-scripts)\b/

/** `inet` method of each adapter that has an `iface <name> inet …` stanza. */
export function ifupdownMethods(text: string): Map<string, string> {
  const methods = new Map<string, string>()
  for (const line of text.split('\n')) {
    const match = /^\s*iface\s+(\S+)\s+inet\s+(\S+)/.exec(line)
    if (match) methods.set(match[1]!, match[2]!)
  }
  return methods
}

/** The stanza lines for one adapter (`dns-*` options are read by resolvconf when installed). */
export function ipv4Stanza(name: string, config: AdapterConfig): string[] {
  if (config.mode === 'dhcp') return [`iface ${name} inet dhcp`]
  const lines = [`iface ${name} inet static`, `    address ${config.address}/${config.prefix}`]
  if (config.gateway) lines.push(`    gateway ${config.gateway}`)
  if (config.dns?.length) lines.push(`    dns-nameservers ${config.dns.join(' ')}`)
  if (config.searchDomains?.length) lines.push(`    dns-search ${config.searchDomains.join(' ')}`)
  return lines
}

/**
 * The file with the adapter's `iface <name> inet` stanza replaced by the new one (added, with
 * `auto <name>`, when it has none). Other adapters, `inet6` stanzas and comments are kept.
 */
export function rewriteIfupdown(text: string, name: string, config: AdapterConfig): string {
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  const out: string[] = []
  let replaced = false
  for (let i = 0; i < lines.length; i++) {
    const match = /^\s*iface\s+(\S+)\s+inet\s+\S+/.exec(lines[i]!)
    if (!match || match[1] !== name) {
      out.push(lines[i]!)
      continue
    }
    // skip the old stanza's option lines
    while (i + 1 < lines.length && !STANZA.test(lines[i + 1]!.trim()) && lines[i + 1]!.trim() !== '') i++
    if (!replaced) out.push(...ipv4Stanza(name, config))
    replaced = true
  }
  if (!replaced) {
    if (out.length && out.at(-1) !== '') out.push('')
    const hasAuto = lines.some((line) => new RegExp(`^\\s*(auto|allow-hotplug)\\s+(.*\\s)?${name.replace(/[.]/g, '\\.')}(\\s|$)`).test(line))
    if (!hasAuto) out.push(`auto ${name}`)
    out.push(...ipv4Stanza(name, config))
  }
  return out.join('\n') + '\n'
}
