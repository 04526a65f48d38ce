/** The console's pages: the hash of each (`#/<key>`) and its name; each page's main heading is its name. */
export const PAGES = {
  review: 'Review', live: 'Live', recordings: 'Recordings', events: 'Events',
  cameras: 'Cameras', tasks: 'Tasks', policies: 'Alarm policies', schedules: 'Schedules', audio: 'Audio',
  detect: 'Detection', galleries: 'Galleries', algorithms: 'Algorithms', models: 'Models',
  device: 'Device', metrics: 'Metrics', logs: 'Logs', system: 'System', network: 'Network', backup: 'Backup and reset',
  fleet: 'Fleet', api: 'Try the API',
} as const
export type Page = keyof typeof PAGES

/**
 * The navigation in sections (docs/console-and-cli.md "Navigation"), in their order: what an
 * operator watches, what the device analyses, the recognition set-up, the device itself, and
 * the interface for integrators. Every page is in exactly one section.
 */
export const NAV_SECTIONS: { title: string; pages: Page[] }[] = [
  { title: 'Watch', pages: ['review', 'live', 'recordings', 'events'] },
  { title: 'Set up', pages: ['cameras', 'tasks', 'policies', 'schedules', 'audio'] },
  { title: 'Recognition', pages: ['detect', 'galleries', 'algorithms', 'models'] },
  { title: 'Device', pages: ['device', 'metrics', 'logs', 'system', 'network', 'backup', 'fleet'] },
  { title: 'Developers', pages: ['api'] },
]
