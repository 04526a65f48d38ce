import type { MqttSettings, WebhookSettings } from './types.ts'

// Secrets never leave the device: the System endpoints say whether one is set, not what it is.
export const presentMqtt = ({ password, ...rest }: MqttSettings) => ({ ...rest, passwordSet: password !== '' })
export const presentWebhook = ({ secret, ...rest }: WebhookSettings) => ({ ...rest, secretSet: secret !== '' })
