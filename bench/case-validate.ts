/**
 * `npm run case:validate <file>`: checks a benchmark case file (spec 2.8) against the schema
 * and the cross-field rules. Prints every violation as `<JSON pointer> [<rule>] <message>`.
 * Exit codes: 0 valid, 1 violations found, 2 usage error or unreadable / non-JSON file.
 */
import { readFile } from 'node:fs/promises'
import { createCaseFileValidator, formatViolation } from './case/validator.ts'

async function main(args: string[]): Promise<number> {
  if (args.length !== 1) {
    console.error('usage: npm run case:validate <case-file.json>')
    return 2
  }
  const file = args[0]!
  let parsed: unknown
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'))
  } catch (err) {
    console.error(`${file}: cannot read as JSON: ${(err as Error).message}`)
    return 2
  }
  const violations = createCaseFileValidator()(parsed)
  if (violations.length === 0) {
    console.log(`OK ${file}: valid benchmark case file`)
    return 0
  }
  console.error(`${file}: ${violations.length} violation(s)`)
  for (const v of violations) console.error(`  ${formatViolation(v)}`)
  return 1
}

process.exitCode = await main(process.argv.slice(2))
