import { randomBytes } from 'node:crypto'
import type { Context } from 'hono'
import { Server, type Upload } from '@tus/server'
import { failure } from '../../shared/envelope.ts'
import { ApiError, isApiError } from '../../shared/errors/index.ts'
import type { Identity, MountedRoute, Services } from '../../shared/handler.ts'
import { CHECKSUM_ALGORITHMS } from './session-store.ts'
import type { UploadManager } from './service.ts'

/**
 * The native tus 1.0.0 endpoint (extensions creation, termination, expiration, checksum), for
 * any stock tus client. Same `mtk` authentication as every other route (spec 5.2), same store,
 * same admission and reservation accounting as `uploadTemp`: a finished tus upload is a
 * complete session that `ctx.uploads.claim` consumes, and `cancelUpload` works on it too.
 *
 * Upload metadata: `filename` (or `name`), `purpose` (default `file`), optional `sha256`
 * (hex, verified when the upload completes).
 */
export const TUS_PATH = '/gtw/cwai/atomic/model/tus'

/** How ViewRoutes lists the tus endpoint (it is mounted by runtime/http/app.ts, not by a bundle). */
export const TUS_ROUTE: MountedRoute = {
  path: TUS_PATH,
  // GET: @tus/server also serves a completed upload back to its owner.
  methods: ['OPTIONS', 'HEAD', 'GET', 'POST', 'PATCH', 'DELETE'],
  auth: 'session',
  body: 'tus',
  bundle: '',
  summary: 'tus 1.0.0 resumable upload endpoint (creation, termination, expiration, checksum); uploads live under this path.',
  protocol: 'tus',
}

/** A tus error answer: the catalogue item as an envelope body, with a non-2xx status. */
const tusError = (error: ApiError, status: number) => ({ status_code: status, body: JSON.stringify(failure([error.item])) })

const statusOf = (error: ApiError): number => {
  if (error.httpStatus >= 400) return error.httpStatus
  switch (error.id) {
    case 'STORAGE_RESERVE_REACHED': return 507
    case 'UPLOAD_NOT_FOUND': return 404
    case 'UPLOAD_EXPIRED': case 'UPLOAD_CANCELLED': case 'UPLOAD_CONSUMED': case 'UPLOAD_FAILED': return 410
    case 'TRANSFER_BUSY': return 423
    default: return 400
  }
}

export function tusEndpoint(services: Services, uploads: UploadManager) {
  const identities = new WeakMap<Request, Identity>()
  const identityOf = (req: Request) => {
    const identity = identities.get(req)
    if (!identity) throw tusError(new ApiError('Unauthorized'), 401)
    return identity
  }
  const asTus = (error: unknown) => (isApiError(error) ? tusError(error, statusOf(error)) : error)

  const server = new Server({
    path: TUS_PATH,
    datastore: uploads.store,
    relativeLocation: true,
    // spec 8: no product quota unless the deployment sets one; live admission decides.
    ...(services.config.uploadMaxTotalBytes > 0 ? { maxSize: services.config.uploadMaxTotalBytes } : {}),
    namingFunction: () => randomBytes(16).toString('hex'),
    async onUploadCreate(req, upload: Upload) {
      if (upload.sizeIsDeferred)
        throw tusError(new ApiError('InvalidParam', { details: { field: 'Upload-Length', reason: 'required: admission needs the size' } }), 400)
      try {
        await uploads.tus.admit(identityOf(req as unknown as Request), upload)
      } catch (error) {
        throw asTus(error)
      }
      return {}
    },
    async onUploadFinish(_req, upload: Upload) {
      await uploads.tus.finish(upload.id, upload.offset)
      return {}
    },
    // Catalogue errors thrown inside the store (runtime/uploads/session-store.ts) answer like the hooks'.
    onResponseError: (_req, error) => (isApiError(error) ? tusError(error, statusOf(error)) : undefined),
    async onIncomingRequest(req, uploadId) {
      if (req.method === 'POST' || req.method === 'OPTIONS') return
      try {
        // Another user's upload answers like an unknown one (spec 2.5: bound to its creator).
        await uploads.tus.session(identityOf(req as unknown as Request), uploadId)
      } catch (error) {
        throw asTus(error)
      }
    },
  })

  return async function tus(c: Context): Promise<Response> {
    const request = c.req.raw
    if (request.method !== 'OPTIONS') {
      const identity = await services.sessions.resolve(c.req.header('mtk'))
      if (!identity) return c.json(failure([new ApiError('Unauthorized').item]), 401)
      if (identity.passwordChangeRequired) return c.json(failure([new ApiError('PasswordChangeRequired').item]), 403)
      identities.set(request, identity)
    }
    if (request.method === 'PATCH') {
      const header = c.req.header('upload-checksum')
      if (header !== undefined) {
        const [algorithm, digest] = header.trim().split(/\s+/)
        // tus checksum extension: an unsupported algorithm is 400.
        if (!algorithm || !digest || !CHECKSUM_ALGORITHMS.includes(algorithm))
          return new Response('Unsupported Upload-Checksum algorithm\n', { status: 400, headers: { 'Tus-Resumable': '1.0.0' } })
        uploads.store.expectedChecksums.set(uploadIdOf(request), { algorithm, digest })
      }
    }
    const response = await server.handleWeb(request)
    if (request.method === 'OPTIONS') response.headers.set('Tus-Checksum-Algorithm', CHECKSUM_ALGORITHMS.join(','))
    else await setUploadExpires(request, response)
    return response
  }

  /**
   * tus expiration extension: Upload-Expires on the creation and PATCH answers of an unfinished
   * upload, from the service's rule (last activity + idle timeout, or the absolute lifetime when
   * sooner; spec 3.1 / 8), so that every accepted PATCH moves it on.
   */
  async function setUploadExpires(request: Request, response: Response): Promise<void> {
    const created = request.method === 'POST' && response.status === 201
    const patched = request.method === 'PATCH' && response.status === 204
    if (!created && !patched) return
    const id = created ? (response.headers.get('location') ?? '').split('/').pop() ?? '' : uploadIdOf(request)
    const expiresAt = await uploads.tus.expiresAt(id)
    if (expiresAt === null) response.headers.delete('Upload-Expires')
    else response.headers.set('Upload-Expires', new Date(expiresAt).toUTCString())
  }
}

const uploadIdOf = (request: Request) => decodeURIComponent(new URL(request.url).pathname.slice(TUS_PATH.length + 1))
