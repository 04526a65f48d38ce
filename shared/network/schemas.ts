import { Type, type Static } from '@sinclair/typebox'
import { CHANGE_LIMITS as L } from './check.ts'

// Input schemas of the network endpoints (docs/network.md "Network").

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

/** The backends a change can be written through (docs/network.md "Network"): a type key picks the plugin. */
export const BACKEND_TYPES = ['iproute2-runtime', 'systemd-networkd', 'networkmanager', 'ifupdown'] as const
export type BackendType = (typeof BACKEND_TYPES)[number]

/**
 * A change of one adapter: its whole IPv4 configuration (static address with prefix and
 * optional gateway, or DHCP) and optionally its DNS servers and search domains.
 */
export const AdapterChange = Type.Object({
  adapter: Type.String({ minLength: 1, maxLength: 15, pattern: '^[A-Za-z0-9_.:@-]+$', description: 'Adapter name as QueryAdapters lists it.' }),
  mode: Type.Union([Type.Literal('static'), Type.Literal('dhcp')]),
  address: Type.Optional(Type.String({ maxLength: 15, description: 'IPv4 address (static only).' })),
  prefix: Type.Optional(Type.Integer({ minimum: 1, maximum: 32, description: 'IPv4 prefix length (static only).' })),
  gateway: Type.Optional(Type.String({ maxLength: 15, description: 'IPv4 gateway inside the subnet (static only); absent = no default route through this adapter.' })),
  dns: Type.Optional(Type.Array(Type.String({ maxLength: 45 }), { maxItems: L.dns, description: 'DNS servers (IPv4 or IPv6).' })),
  searchDomains: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: L.searchDomainLength, pattern: L.searchDomainPattern }), { maxItems: L.searchDomains })),
  confirmTimeoutSeconds: Type.Optional(Type.Integer({ minimum: L.confirmSeconds.min, maximum: L.confirmSeconds.max, description: 'Time to confirm before the previous configuration comes back; default NETWORK_CONFIRM_TIMEOUT_MS.' })),
}, { additionalProperties: false })
export type AdapterChange = Static<typeof AdapterChange>

/** What a backend writes: the change without the adapter name and the confirm timeout. */
export type AdapterConfig = Omit<AdapterChange, 'adapter' | 'confirmTimeoutSeconds'>

export const ChangeId = Type.Object({
  changeId: Type.String({ minLength: 1, maxLength: 64, description: 'The changeId SetAdapter answered.' }),
}, { additionalProperties: false })
