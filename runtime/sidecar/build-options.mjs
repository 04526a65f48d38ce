// esbuild options of the sidecar bundle (runtime/sidecar/main.ts → dist/runtime/sidecar.mjs).
// Native packages stay external; CommonJS dependencies get a `require` in the ESM bundle.
import path from 'node:path'

/** @param {string} root project root @param {string} outfile */
export const sidecarBuildOptions = (root, outfile = path.join(root, 'dist/runtime/sidecar.mjs')) => ({
  entryPoints: [path.join(root, 'runtime/sidecar/main.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  external: ['sharp', 'onnxruntime-node'],
  banner: { js: "import { createRequire as __sidecarCreateRequire } from 'node:module'; const require = __sidecarCreateRequire(import.meta.url);" },
  logLevel: 'warning',
})
