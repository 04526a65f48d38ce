/**
 * How much a stream on the upload path (parser → part → chunk body → byte gate → file) may
 * hold before it asks for no more. A socket hands over 64 KB at a time; under Node's 16 KB
 * default every read overran every stream, so each 64 KB went through a pause and resume at
 * each step (bench/upload.bench.mjs: ~470 against ~560 MB/s). 256 KB lets a few reads queue
 * while still bounding what an upload holds in memory.
 */
export const UPLOAD_STREAM_BUFFER_BYTES = 256 * 1024
