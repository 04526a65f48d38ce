import { Type, type Static } from '@sinclair/typebox'

// Input schemas of the network endpoints (README "Network").

const Name = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$', description: 'Unique name of the target or check.' })
const Host = Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.:_-]+$', description: 'Host name or IP address.' })
const Port = Type.Integer({ minimum: 1, maximum: 65535 })

export const QualityTarget = Type.Object({ name: Name, host: Host, port: Port }, { additionalProperties: false })

export const ConnectivityCheck = Type.Union([
  Type.Object({ name: Name, type: Type.Literal('tcp'), host: Host, port: Port }, { additionalProperties: false }),
  Type.Object({
    name: Name,
    type: Type.Literal('http'),
    url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://', description: 'http:// or https:// URL fetched with GET.' }),
  }, { additionalProperties: false }),
  Type.Object({ name: Name, type: Type.Literal('dns'), hostname: Host }, { additionalProperties: false }),
])

/** What an operator configured: the only hosts the device measures or checks (spec 4.10 Network). */
export const NetworkTargets = Type.Object({
  qualityTargets: Type.Array(QualityTarget, { maxItems: 16, description: 'Measured by TestQuality with timed TCP connects.' }),
  checks: Type.Array(ConnectivityCheck, { maxItems: 32, description: 'Run by TestConnectivity.' }),
  samples: Type.Integer({ minimum: 1, maximum: 10, description: 'TCP connects per quality target.' }),
  timeoutMs: Type.Integer({ minimum: 100, maximum: 5000, description: 'Timeout of one connect, request or resolution.' }),
}, { additionalProperties: false })

export type QualityTarget = Static<typeof QualityTarget>
export type ConnectivityCheck = Static<typeof ConnectivityCheck>
export type NetworkTargets = Static<typeof NetworkTargets>

/** Run only the named targets or checks; all when absent. */
export const TestSelection = Type.Object({
  names: Type.Optional(Type.Array(Name, { minItems: 1, maxItems: 32, uniqueItems: true })),
}, { additionalProperties: false })
