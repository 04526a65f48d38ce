import type { BuildOptions } from 'esbuild'
export declare const sidecarBuildOptions: (root: string, outfile?: string) => BuildOptions
