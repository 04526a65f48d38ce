import type { LibSQLDatabase } from 'drizzle-orm/libsql'
import type * as schema from './schema/index.ts'

/** The device's database as drizzle types it (schema in `./schema/`); opened by runtime/db/client.ts. */
export type Db = LibSQLDatabase<typeof schema>
/** A drizzle transaction (`db.transaction(async (tx) => ...)`); queries on it commit together. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
/** Either the database or a transaction on it. */
export type DbOrTx = Db | Tx
