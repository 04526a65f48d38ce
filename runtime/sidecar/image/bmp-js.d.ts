declare module 'bmp-js' {
  interface BmpImage { width: number; height: number; data: Buffer }
  export function decode(buffer: Buffer): BmpImage
  export function encode(image: { width: number; height: number; data: Buffer }, quality?: number): { data: Buffer; width: number; height: number }
  const bmp: { decode: typeof decode; encode: typeof encode }
  export default bmp
}
