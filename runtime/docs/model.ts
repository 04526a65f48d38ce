import type { AuthMode } from '../../shared/handler.ts'

/**
 * What the interface documents are generated from (spec 9: packaged documents v1.0).
 * The build fills it from the routes manifest and the handlers' definitions, so the
 * documents cannot drift from the code.
 */
export interface DocRoute {
  path: string
  methods: string[]
  auth: AuthMode
  body: 'json' | 'multipart' | 'none'
  summary: string
  /** JSON Schema of the handler's input (TypeBox schemas are JSON Schema). */
  input: JsonSchema
  bundle: string
}

export type JsonSchema = Record<string, unknown>

export interface EventKindDoc {
  kind: string
  source: string
  alarm: boolean
  doc: string
  payload: Record<string, string>
}

/** The MQTT side: present once the events area is built (see runtime/docs/step.mjs). */
export interface MqttDoc {
  topics: Record<string, string>
  /** Field → type and meaning of the retained registration. */
  registration: Record<string, string>
  eventKinds: EventKindDoc[]
}

export { DOCUMENT_VERSION, DOCUMENT_PATHS, OPENAPI_PATH } from '../../shared/docs/paths.ts'

/** The category of a route: the segment after the prefix (`/gtw/cwai/login/DoLogin` → `login`). */
export function categoryOf(path: string): string {
  const parts = path.split('/').filter(Boolean)
  if (parts[0] === 'v1' || parts[0] === 'gtw') return parts.slice(2, -1).join('/') || 'root'
  return parts.slice(0, -1).join('/') || 'root'
}
