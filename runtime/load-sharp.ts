import type Sharp from 'sharp'

let loading: Promise<typeof Sharp> | null = null

/**
 * sharp (libvips), loaded by its first use in the server process: camera snapshots, JPEG
 * settings, the logo and fleet thumbnails are not part of every start, and loading sharp was
 * (bench/README.md, device-start).
 */
export const loadSharp = (): Promise<typeof Sharp> => (loading ??= import('sharp').then((module) => module.default))
