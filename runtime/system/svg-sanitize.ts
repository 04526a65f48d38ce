/**
 * SVG logos are rebuilt from an allowlist (docs/system.md "System settings", Logo): the markup is read
 * as XML, and only known drawing elements and presentation attributes are written back, every
 * value escaped again. What cannot be carried safely is taken out and named in `removed`:
 * scripts and any element not on the list (with everything inside it), event handlers (`on*`),
 * references that leave the document (`href` other than `#id`, `url(...)` other than
 * `url(#id)`), `<style>` sheets. A DOCTYPE (entities), markup that is not well formed, or a root
 * other than `<svg>` is refused (SvgRefused).
 */

export class SvgRefused extends Error {}

const ELEMENTS = new Set([
  'svg', 'g', 'defs', 'title', 'desc', 'symbol', 'use', 'path', 'rect', 'circle', 'ellipse', 'line', 'polyline', 'polygon',
  'text', 'tspan', 'textPath', 'linearGradient', 'radialGradient', 'stop', 'clipPath', 'mask', 'pattern', 'marker',
  'filter', 'feGaussianBlur', 'feOffset', 'feBlend', 'feColorMatrix', 'feFlood', 'feComposite', 'feMerge', 'feMergeNode', 'feDropShadow',
])
const ATTRIBUTES = new Set([
  'id', 'class', 'x', 'y', 'x1', 'y1', 'x2', 'y2', 'cx', 'cy', 'r', 'rx', 'ry', 'fx', 'fy', 'width', 'height', 'd', 'points',
  'viewBox', 'preserveAspectRatio', 'transform', 'opacity', 'fill', 'stroke', 'color', 'display', 'visibility', 'offset',
  'gradientUnits', 'gradientTransform', 'spreadMethod', 'clip-path', 'clip-rule', 'clipPathUnits', 'mask', 'maskUnits', 'maskContentUnits',
  'patternUnits', 'patternContentUnits', 'patternTransform', 'markerWidth', 'markerHeight', 'markerUnits', 'refX', 'refY', 'orient', 'marker-start', 'marker-mid', 'marker-end',
  'filter', 'filterUnits', 'primitiveUnits', 'stdDeviation', 'dx', 'dy', 'in', 'in2', 'result', 'mode', 'values', 'type', 'operator', 'k1', 'k2', 'k3', 'k4',
  'text-anchor', 'dominant-baseline', 'alignment-baseline', 'baseline-shift', 'letter-spacing', 'word-spacing', 'text-decoration', 'writing-mode', 'textLength', 'lengthAdjust',
  'vector-effect', 'shape-rendering', 'text-rendering', 'paint-order', 'style', 'version', 'xmlns', 'xmlns:xlink', 'xml:space', 'href', 'xlink:href',
])
const ATTRIBUTE_PREFIXES = ['fill-', 'stroke-', 'font-', 'stop-', 'flood-', 'lighting-']
const LOCAL_REFERENCE = /^#[A-Za-z_][\w.:-]*$/
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
const NAME = /^[A-Za-z_][\w.:-]*/

const decode = (text: string) => text.replace(/&(#x[0-9a-f]+|#\d+|\w+);|&/gi, (match, entity: string | undefined) => {
  if (!entity) throw new SvgRefused('a bare & (not well-formed XML)')
  if (entity[0] === '#') {
    const code = entity[1] === 'x' || entity[1] === 'X' ? parseInt(entity.slice(2), 16) : Number(entity.slice(1))
    if (!(code > 0 && code <= 0x10ffff)) throw new SvgRefused(`character reference ${match}`)
    return String.fromCodePoint(code)
  }
  if (!(entity in ENTITIES)) throw new SvgRefused(`undefined entity ${match}`)
  return ENTITIES[entity]!
})
const escapeText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const escapeAttribute = (text: string) => escapeText(text).replace(/"/g, '&quot;')

/** Why a value may not stay, or null: every `url(...)` must name a fragment of this document. */
function unsafeValue(name: string, value: string): string | null {
  // eslint-disable-next-line no-control-regex -- control characters are what it removes
  const compact = value.replace(/[\s\u0000-\u001f]/g, '').toLowerCase()
  if (name === 'href' || name === 'xlink:href') return LOCAL_REFERENCE.test(value.trim()) ? null : `${name}="${value.slice(0, 60)}"`
  for (const m of compact.matchAll(/url\(([^)]*)\)/g)) if (!/^['"]?#/.test(m[1]!)) return `${name} with url(${m[1]!.slice(0, 60)})`
  if (/javascript:|expression\(|@import|behavior:|-moz-binding/.test(compact)) return `${name}="${value.slice(0, 60)}"`
  return null
}

const allowedAttribute = (name: string) => ATTRIBUTES.has(name) || ATTRIBUTE_PREFIXES.some((p) => name.startsWith(p))

/** The sanitised SVG and what was taken out (unique, in order of appearance). */
export function sanitizeSvg(source: string): { svg: string; removed: string[] } {
  const removed = new Set<string>()
  const out: string[] = []
  const stack: { name: string; kept: boolean }[] = []
  let skipping = 0 // depth inside a removed element
  let rootSeen = false
  let at = source.charCodeAt(0) === 0xfeff ? 1 : 0
  while (at < source.length) {
    const lt = source.indexOf('<', at)
    const text = source.slice(at, lt === -1 ? source.length : lt)
    if (text) {
      if (stack.length === 0) {
        if (text.trim()) throw new SvgRefused('text outside the <svg> element')
      } else if (!skipping) out.push(escapeText(decode(text)))
    }
    if (lt === -1) break
    if (source.startsWith('<!--', lt)) {
      const end = source.indexOf('-->', lt + 4)
      if (end === -1) throw new SvgRefused('an unterminated comment')
      at = end + 3
    } else if (source.startsWith('<![CDATA[', lt)) {
      const end = source.indexOf(']]>', lt + 9)
      if (end === -1 || stack.length === 0) throw new SvgRefused('a CDATA section outside an element or unterminated')
      if (!skipping) out.push(escapeText(source.slice(lt + 9, end)))
      at = end + 3
    } else if (source.startsWith('<!', lt)) {
      throw new SvgRefused('a DOCTYPE or entity declaration (not accepted: entities can expand or reach outside)')
    } else if (source.startsWith('<?', lt)) {
      const end = source.indexOf('?>', lt + 2)
      if (end === -1) throw new SvgRefused('an unterminated processing instruction')
      const target = NAME.exec(source.slice(lt + 2))?.[0] ?? ''
      if (target !== 'xml') removed.add(`<?${target}?>`)
      at = end + 2
    } else if (source[lt + 1] === '/') {
      const end = source.indexOf('>', lt)
      const name = source.slice(lt + 2, end === -1 ? undefined : end).trim()
      const open = stack.pop()
      if (end === -1 || !open || open.name !== name) throw new SvgRefused(`</${name.slice(0, 40)}> does not close the open element`)
      if (open.kept) out.push(`</${name}>`)
      else skipping--
      at = end + 1
    } else {
      const name = NAME.exec(source.slice(lt + 1))?.[0]
      if (!name) throw new SvgRefused('a < that starts no element')
      if (stack.length === 0) {
        if (rootSeen || name !== 'svg') throw new SvgRefused(rootSeen ? 'more than one root element' : `the root element is <${name.slice(0, 40)}>, not <svg>`)
        rootSeen = true
      }
      let p = lt + 1 + name.length
      const attributes: [string, string][] = []
      for (;;) {
        const space = /^\s*/.exec(source.slice(p))![0].length
        p += space
        if (source.startsWith('/>', p) || source[p] === '>') break
        const attribute = NAME.exec(source.slice(p))?.[0]
        if (!attribute || !space) throw new SvgRefused(`a malformed attribute in <${name}>`)
        p += attribute.length
        const quote = /^\s*=\s*(["'])/.exec(source.slice(p))
        if (!quote) throw new SvgRefused(`attribute ${attribute} of <${name}> has no quoted value`)
        p += quote[0].length
        const close = source.indexOf(quote[1]!, p)
        if (close === -1) throw new SvgRefused(`attribute ${attribute} of <${name}> is not terminated`)
        const raw = source.slice(p, close)
        if (raw.includes('<')) throw new SvgRefused(`attribute ${attribute} of <${name}> holds a <`)
        attributes.push([attribute, decode(raw)])
        p = close + 1
      }
      const selfClosing = source.startsWith('/>', p)
      at = p + (selfClosing ? 2 : 1)
      const kept = !skipping && ELEMENTS.has(name)
      if (!kept && !skipping) removed.add(`<${name}>`)
      if (kept) {
        const written: string[] = []
        for (const [attribute, value] of attributes) {
          if (/^on/i.test(attribute) || !allowedAttribute(attribute)) {
            removed.add(attribute)
            continue
          }
          const unsafe = unsafeValue(attribute, value)
          if (unsafe) removed.add(unsafe)
          else written.push(` ${attribute}="${escapeAttribute(value)}"`)
        }
        out.push(`<${name}${written.join('')}${selfClosing ? '/>' : '>'}`)
      }
      if (!selfClosing) {
        stack.push({ name, kept })
        if (!kept) skipping++
      }
    }
  }
  if (!rootSeen) throw new SvgRefused('no <svg> element')
  if (stack.length) throw new SvgRefused(`<${stack.at(-1)!.name}> is not closed`)
  return { svg: out.join(''), removed: [...removed] }
}
