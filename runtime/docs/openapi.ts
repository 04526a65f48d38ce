import { catalogue } from '../../shared/errors/catalogue.ts'
import { RecommendedAction } from '../../shared/errors/actions.ts'
import { categoryOf, DOCUMENT_VERSION, type DocRoute, type JsonSchema } from './model.ts'

/** Strips what TypeBox leaves that is not JSON Schema (it only adds symbol keys; JSON round-trip drops them). */
const plain = (schema: JsonSchema): JsonSchema => JSON.parse(JSON.stringify(schema ?? {}))

const operationId = (path: string, method: string) =>
  `${method.toLowerCase()}_${path.split('/').filter(Boolean).join('_')}`.replace(/[^A-Za-z0-9_]/g, '_')

/** spec 2.7 */
const MessageItem: JsonSchema = {
  type: 'object',
  required: ['msgCode', 'msgText', 'messageKey', 'details', 'retryable', 'recommendedAction'],
  properties: {
    msgCode: { type: 'string', description: 'Error code; may be a numeric compatibility code.' },
    msgText: { type: 'string', description: 'Display text; not to be relied on for logic.' },
    messageKey: { type: 'string', enum: [...new Set(Object.values(catalogue).map((e) => e.messageKey))], description: 'Localization key; primary key for branching.' },
    details: { type: 'object', description: 'Machine-readable context (actualBytes, limitBytes, field, ...).' },
    retryable: { type: 'boolean' },
    retryAfterSeconds: { type: 'number' },
    recommendedAction: { type: 'string', enum: Object.values(RecommendedAction) },
  },
}

/** spec 2.1 */
const Envelope: JsonSchema = {
  type: 'object',
  required: ['resCode', 'resMsg', 'resultCode', 'resultMsg'],
  properties: {
    resCode: { type: 'integer', enum: [0, 1], description: '1 = success, 0 = failure.' },
    resMsg: { type: 'array', items: { $ref: '#/components/schemas/MessageItem' } },
    resultCode: { type: 'string' },
    resultMsg: { type: 'string' },
    resData: { description: 'Present on concrete success responses; shape depends on the interface.' },
  },
}

const envelopeResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } },
})

function operation(route: DocRoute, method: string) {
  const input = plain(route.input)
  const op: Record<string, unknown> = {
    operationId: operationId(route.path, method),
    summary: route.summary,
    tags: [categoryOf(route.path)],
    responses: {
      200: envelopeResponse('Envelope (spec 2.1): resCode 1 with resData, or resCode 0 with resMsg.'),
      ...(route.auth === 'anonymous' ? {} : {
        401: envelopeResponse('mtk missing, unknown or expired (api.error.Unauthorized).'),
        403: envelopeResponse('Password change pending (api.error.PasswordChangeRequired).'),
      }),
      ...(route.body === 'none' ? {} : { 413: envelopeResponse('Body too large (HTTP_BODY_TOO_LARGE; a low-level rejection may be a bare 413).') }),
    },
  }
  // spec 5.2: every route but DoLogin and Probe needs mtk; the metrics route also takes the scrape token.
  if (route.auth === 'anonymous') op.security = []
  if (route.auth === 'scrape') op.security = [{ mtk: [] }, { scrapeToken: [] }]
  if (route.auth === 'stream') op.security = [{ mtk: [] }, { streamToken: [] }]
  if (route.body === 'json' && method !== 'GET' && method !== 'HEAD') {
    op.requestBody = { required: true, content: { 'application/json': { schema: input } } }
  } else if (route.body === 'multipart') {
    op.requestBody = { required: true, content: { 'multipart/form-data': { schema: input } } }
  } else {
    const properties = (input.properties ?? {}) as Record<string, JsonSchema>
    const required = new Set((input.required ?? []) as string[])
    const parameters = Object.entries(properties).map(([name, schema]) => ({ name, in: 'query', required: required.has(name), schema }))
    if (parameters.length) op.parameters = parameters
  }
  return op
}

/** The HTTP interface as an OpenAPI 3.1 document. */
export function buildOpenApi(routes: DocRoute[], info: { softwareVersion: string }): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const route of [...routes].sort((a, b) => a.path.localeCompare(b.path))) {
    const item: Record<string, unknown> = {}
    for (const method of route.methods) item[method.toLowerCase()] = operation(route, method)
    paths[route.path] = item
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Image Detection and Device Management Interface',
      version: DOCUMENT_VERSION,
      description: `HTTP interface of the edge AI device (software ${info.softwareVersion}). Generated at build time from the route table and the handlers' input schemas. Every request except DoLogin and Probe carries the header \`mtk\` (spec 5).`,
    },
    servers: [{ url: '/' }],
    security: [{ mtk: [] }],
    tags: [...new Set(routes.map((r) => categoryOf(r.path)))].sort().map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        mtk: { type: 'apiKey', in: 'header', name: 'mtk', description: 'Session token from DoLogin (spec 2.2).' },
        scrapeToken: { type: 'http', scheme: 'bearer', description: 'The configured METRICS_TOKEN (docs/metrics.md "Metrics"), for a Prometheus scraper; only where an operation lists it.' },
        streamToken: { type: 'apiKey', in: 'query', name: 'token', description: 'A stream token from LiveStream/request or File/ClipPlayUrl (docs/recording-and-live-view.md "Live view"), for media players that cannot send mtk; only where an operation lists it.' },
      },
      schemas: { Envelope, MessageItem },
    },
  }
}
