import type { MqttSettings, WebhookSettings } from './types.ts'

// Secrets never leave the device: the System endpoints say whether one is set, not what it is.
export const presentMqtt = ({ password, ...rest }: MqttSettings) => ({ ...rest, passwordSet: password !== '' })
export const presentWebhook = ({ secret, ...rest }: WebhookSettings) => ({ ...rest, secretSet: secret !== '' })

/** A broker URL fit for logs and messages: its password replaced (device logs, device-cli). */
export const redactUrl = (value: string) => {
  try {
    const url = new URL(value)
    if (url.password) url.password = '***'
    return url.toString()
  } catch {
    return '[invalid url]'
  }
}
