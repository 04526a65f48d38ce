/** The console's pages: the hash of each (`#/<key>`) and its name, in the navigation's order; each page's main heading is its name. */
export const PAGES = {
  detect: 'Detection', tasks: 'Tasks', algorithms: 'Algorithms', models: 'Models', logs: 'Logs', metrics: 'Metrics', device: 'Device', api: 'Try the API',
  cameras: 'Cameras',
  audio: 'Audio', system: 'System',
  backup: 'Backup and reset',
  network: 'Network',
  galleries: 'Galleries',
  events: 'Events', policies: 'Alarm policies', schedules: 'Schedules',
  live: 'Live', recordings: 'Recordings',
  fleet: 'Fleet',
} as const
export type Page = keyof typeof PAGES
