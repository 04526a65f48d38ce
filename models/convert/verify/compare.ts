/** Equivalence rule of the conversion check: every value within 1e-3 absolute or 1e-4 relative. */
export const ABSOLUTE_TOLERANCE = 1e-3
export const RELATIVE_TOLERANCE = 1e-4

export interface Mismatch {
  index: number
  expected: number
  actual: number
}

/** The first value where `actual` departs from `expected`, or undefined when all agree. */
export function firstMismatch(expected: ArrayLike<number>, actual: ArrayLike<number>): Mismatch | undefined {
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i]!
    const a = Number(actual[i])
    const diff = Math.abs(e - a)
    if (!(diff <= ABSOLUTE_TOLERANCE || diff <= RELATIVE_TOLERANCE * Math.abs(e))) return { index: i, expected: e, actual: a }
  }
  return undefined
}

/** Deterministic uniform [0, 1) values (a fixed LCG), so every run checks the same inputs. */
export function seededUniform(count: number, seed: number): Float32Array {
  let state = seed >>> 0
  const out = new Float32Array(count)
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    out[i] = state / 4294967296
  }
  return out
}
