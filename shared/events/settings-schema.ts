import { Type } from '@sinclair/typebox'

// Input schemas of the System channel-settings endpoints (docs/events.md "Events"); every field is
// optional in a set request: what is given replaces the stored value, the rest is kept.
export const MqttSettingsPatch = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  url: Type.Optional(Type.String({ maxLength: 2048 })),
  clientId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[^/+#\\s]+$' })),
  username: Type.Optional(Type.String({ maxLength: 256 })),
  password: Type.Optional(Type.String({ maxLength: 256 })),
  topicPrefix: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[^+#\\s]+$' })),
  rejectUnauthorized: Type.Optional(Type.Boolean()),
  caFile: Type.Optional(Type.String({ maxLength: 4096 })),
  certFile: Type.Optional(Type.String({ maxLength: 4096 })),
  keyFile: Type.Optional(Type.String({ maxLength: 4096 })),
  haDiscovery: Type.Optional(Type.Boolean({ description: 'Publish Home Assistant MQTT discovery configs and entity states (docs/events.md "Home Assistant MQTT discovery").' })),
  haDiscoveryPrefix: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[^/+#\\s$][^+#\\s]*[^/+#\\s]$|^[^/+#\\s$]$', description: 'Home Assistant\'s discovery prefix; no wildcards, no leading or trailing slash.' })),
}, { additionalProperties: false })

export const WebhookSettingsPatch = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  urls: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 16, uniqueItems: true })),
  secret: Type.Optional(Type.String({ maxLength: 256 })),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000 })),
  maxAttempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  backoffBaseMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 3_600_000 })),
  backoffMaxMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 86_400_000 })),
}, { additionalProperties: false })
