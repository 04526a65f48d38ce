import { Type } from '@sinclair/typebox'

/** The backup passphrase (docs/system.md "Backup, restore and factory reset"): it is never stored; without it a backup cannot be restored. */
export const Passphrase = Type.String({ minLength: 8, maxLength: 256, description: 'Encrypts the credentials in the backup and signs it; needed to restore it. Never stored.' })
