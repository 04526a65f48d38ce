/** Topics of one device (docs/events.md "MQTT"). */
export const mqttTopics = (prefix: string, clientId: string) => {
  const base = `${prefix}/${clientId}`
  return {
    registration: `${base}/registration`,
    status: `${base}/status`,
    event: (kind: string) => `${base}/event/${kind}`,
    request: `${base}/request`,
    response: `${base}/response`,
    /** Retained fleet summary (docs/deployment.md "Fleet view"; runtime/events/fleet.ts). */
    summary: `${base}/summary`,
  }
}

/** Fields of the retained registration (docs/events.md "MQTT", the MQTT interface document); fields may be added. */
export const REGISTRATION_FIELDS: Record<string, string> = {
  clientId: 'string; the MQTT client id, the device id in every topic',
  softwareVersion: 'string; version of the running process (spec 4.11)',
  buildHash: 'string',
  startedAt: 'string; ISO 8601 time the process started: a new value is a new process (restart, upgrade)',
  websocketPort: 'number; port of the event WebSocket listener',
  http: '{port, urls} or null; the HTTP address (ADVERTISED_URL, else the bound address or each interface address, most reachable first), null until the server listens, then published again',
  topics: 'object; the topics of this device',
  eventKinds: 'string[]; the event kinds it publishes',
  registeredAt: 'string; ISO 8601 time of this registration',
}
