// Types of build.mjs for the TypeScript that imports it (tests).
export const EXECUTABLE: string
export function buildRelease(options: { root: string; dist: string; outdir?: string; version?: string; upgradeOnly?: boolean }): Promise<{ archive?: string; upgradePackage: string }>
