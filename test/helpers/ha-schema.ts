/**
 * Home Assistant's MQTT discovery schema, as its documentation states it, for the components
 * the device announces: the discovery topic format and the abbreviations
 * (https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery, whose abbreviation table is
 * homeassistant/components/mqtt/abbreviations.py), and each component's configuration
 * variables with the required ones (https://www.home-assistant.io/integrations/camera.mqtt/,
 * binary_sensor.mqtt/, event.mqtt/, sensor.mqtt/, switch.mqtt/). Home Assistant itself cannot
 * be installed here: this is the contract the tests hold the configs to.
 */

/** Abbreviations of entity keys (of the documented table, the ones for these components). */
export const ABBREVIATIONS: Record<string, string> = {
  avty: 'availability', avty_mode: 'availability_mode', avty_t: 'availability_topic', avty_tpl: 'availability_template',
  cmd_t: 'command_topic', cmd_tpl: 'command_template', dev: 'device', dev_cla: 'device_class', e: 'encoding',
  en: 'enabled_by_default', ent_cat: 'entity_category', exp_aft: 'expire_after', frc_upd: 'force_update', ic: 'icon',
  json_attr_t: 'json_attributes_topic', json_attr_tpl: 'json_attributes_template', name: 'name', obj_id: 'object_id',
  off_dly: 'off_delay', ops: 'options', opt: 'optimistic', pl_avail: 'payload_available', pl_not_avail: 'payload_not_available',
  pl_off: 'payload_off', pl_on: 'payload_on', ret: 'retain', stat_cla: 'state_class', stat_off: 'state_off', stat_on: 'state_on',
  stat_t: 'state_topic', t: 'topic', uniq_id: 'unique_id', unit_of_meas: 'unit_of_measurement', val_tpl: 'value_template',
  o: 'origin', evt_typ: 'event_types',
}
export const DEVICE_ABBREVIATIONS: Record<string, string> = {
  cns: 'connections', cu: 'configuration_url', ids: 'identifiers', name: 'name', mf: 'manufacturer', mdl: 'model',
  sw: 'sw_version', hw: 'hw_version', sa: 'suggested_area', sn: 'serial_number',
}

const COMMON = ['name', 'unique_id', 'device', 'origin', 'availability', 'availability_mode', 'availability_topic', 'availability_template',
  'payload_available', 'payload_not_available', 'entity_category', 'icon', 'enabled_by_default', 'object_id', 'default_entity_id',
  'json_attributes_topic', 'json_attributes_template', 'qos', 'encoding']

/** Per component: its keys (beside the common ones) and the required ones. */
export const COMPONENTS: Record<string, { keys: string[]; required: string[] }> = {
  camera: { keys: ['topic', 'image_encoding'], required: ['topic'] },
  binary_sensor: { keys: ['state_topic', 'payload_on', 'payload_off', 'device_class', 'value_template', 'expire_after', 'force_update', 'off_delay'], required: ['state_topic'] },
  event: { keys: ['state_topic', 'event_types', 'device_class', 'value_template'], required: ['state_topic', 'event_types'] },
  sensor: {
    keys: ['state_topic', 'value_template', 'unit_of_measurement', 'device_class', 'state_class', 'options', 'expire_after', 'force_update', 'suggested_display_precision', 'last_reset_value_template'],
    required: ['state_topic'],
  },
  switch: { keys: ['command_topic', 'command_template', 'state_topic', 'value_template', 'payload_on', 'payload_off', 'state_on', 'state_off', 'optimistic', 'retain', 'device_class'], required: ['command_topic'] },
}
const DEVICE_KEYS = ['identifiers', 'connections', 'name', 'manufacturer', 'model', 'model_id', 'sw_version', 'hw_version', 'configuration_url', 'suggested_area', 'serial_number', 'via_device']
const AVAILABILITY_KEYS = ['topic', 'payload_available', 'payload_not_available', 'value_template']
export const ENTITY_CATEGORIES = ['config', 'diagnostic']
export const STATE_CLASSES = ['measurement', 'total', 'total_increasing']
/** The device classes the device uses, from the components' documented lists. */
export const DEVICE_CLASSES: Record<string, string[]> = {
  binary_sensor: ['occupancy', 'presence', 'running', 'motion', 'connectivity', 'problem'],
  sensor: ['data_size', 'enum', 'duration', 'power_factor'],
}

const expand = (object: Record<string, unknown>, table: Record<string, string>) =>
  Object.fromEntries(Object.entries(object).map(([key, value]) => [table[key] ?? key, value]))

/** `<discovery_prefix>/<component>/[<node_id>/]<object_id>/config`, ids of `[a-zA-Z0-9_-]`. */
export const DISCOVERY_TOPIC = /^([^/]+(?:\/[^/]+)*)\/(camera|binary_sensor|event|sensor|switch)\/(?:([A-Za-z0-9_-]+)\/)?([A-Za-z0-9_-]+)\/config$/

/** Checks one config; answers its expanded form, or throws naming what breaks the schema. */
export function checkDiscoveryConfig(topic: string, payload: Record<string, unknown>): { component: string; config: Record<string, any> } {
  const match = DISCOVERY_TOPIC.exec(topic)
  if (!match) throw new Error(`${topic}: not a discovery topic`)
  const component = match[2]!
  const schema = COMPONENTS[component]!
  const config: Record<string, any> = expand(payload, ABBREVIATIONS)
  const fail = (why: string) => { throw new Error(`${topic}: ${why}`) }
  for (const key of Object.keys(config)) if (!COMMON.includes(key) && !schema.keys.includes(key)) fail(`key ${key} is not a ${component} option`)
  for (const key of schema.required) if (config[key] === undefined) fail(`required ${key} missing`)
  if (typeof config.unique_id !== 'string' || !config.unique_id) fail('unique_id missing (a device block needs one)')
  const device = expand(config.device ?? fail('device missing'), DEVICE_ABBREVIATIONS)
  for (const key of Object.keys(device)) if (!DEVICE_KEYS.includes(key)) fail(`device key ${key} unknown`)
  if (!(Array.isArray(device.identifiers) && device.identifiers.length > 0) && !device.connections) fail('device needs identifiers or connections')
  config.device = device
  if (config.availability) {
    if (!Array.isArray(config.availability)) fail('availability must be a list')
    config.availability = config.availability.map((item: Record<string, unknown>) => {
      const full = expand(item, ABBREVIATIONS)
      for (const key of Object.keys(full)) if (!AVAILABILITY_KEYS.includes(key)) fail(`availability key ${key} unknown`)
      if (typeof full.topic !== 'string') fail('availability topic missing')
      return full
    })
  }
  if (config.entity_category !== undefined && !ENTITY_CATEGORIES.includes(config.entity_category)) fail(`entity_category ${config.entity_category}`)
  if (config.state_class !== undefined && !STATE_CLASSES.includes(config.state_class)) fail(`state_class ${config.state_class}`)
  if (config.device_class !== undefined && !(DEVICE_CLASSES[component] ?? []).includes(config.device_class)) fail(`device_class ${config.device_class}`)
  if (config.device_class === 'enum' && !(Array.isArray(config.options) && config.options.length > 0)) fail('an enum sensor needs options')
  if (component === 'event' && !(Array.isArray(config.event_types) && config.event_types.length > 0)) fail('event_types must be a non-empty list')
  for (const key of ['state_topic', 'command_topic', 'topic']) if (config[key] !== undefined && (typeof config[key] !== 'string' || /[+#]/.test(config[key]))) fail(`${key} must be a topic without wildcards`)
  return { component, config }
}

/** What a `{{ value_json.<field> }}` template reads, or null for another template. */
export const jsonField = (template: unknown) => (typeof template === 'string' ? /^\{\{ value_json\.([A-Za-z0-9_]+) \}\}$/.exec(template)?.[1] ?? null : null)

/** A switch's command as HA renders its `command_template` for `value` (its now() a number). */
export const renderCommand = (template: string, value: string) =>
  template.replace('{{ now().timestamp() }}', String(Date.now() / 1000)).replace('{{ value }}', value)
