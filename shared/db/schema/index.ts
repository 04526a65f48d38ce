// The database schema as code (drizzle); one file per domain. Migrations are generated from
// these files by `npm run db:generate` (drizzle-kit) into shared/db/migrations.
export * from './auth.ts'
export * from './models.ts'
export * from './algorithms.ts'
export * from './tasks.ts'
export * from './uploads.ts'
export * from './events.ts'
export * from './cameras.ts'
export * from './stream-tasks.ts'
export * from './galleries.ts'
export * from './recording.ts'
