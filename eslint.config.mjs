// ESLint: typescript-eslint's recommended rules (not type-aware, for speed), formatting with
// @stylistic (fixed by `npm run format`, i.e. `eslint --fix .`), and the import boundaries
// between the layers of the device (`layerRules` below).
//
// The formatting rules describe the style the code is written in: no semicolons (a statement
// that starts with `(` or `[` carries a leading `;`), single quotes, two-space indentation,
// trailing commas in multiline literals, binary operators at the end of a broken line but `?`,
// `:` and type `|` / `&` at the start of the next one. Rules the code deliberately does not
// follow (several short statements on a line, mixed operators without parentheses, ternaries
// broken anywhere, the indentation of a broken binary expression's continued lines) are not
// enabled.
import js from '@eslint/js'
import stylistic from '@stylistic/eslint-plugin'
import { defineConfig } from 'eslint/config'
import globals from 'globals'
import tseslint from 'typescript-eslint'

/**
 * Config blocks that confine the relative imports of the files under `root` (a folder of the
 * repository): an import may stay inside `root`; one that leaves it must land in one of
 * `allow` (folders relative to the repository root, ending in `/`), or must not land in one of
 * `deny`. npm packages are not restricted.
 *
 * Core `no-restricted-imports` matches the import string as written, not the resolved path, so
 * the patterns are made per depth below `root`: from `runtime/console/views/X.ts`, `../../`
 * leaves the console and is followed by a folder of `runtime/`, `../../../` by a folder of the
 * repository root, and more `../` leave the repository. Files up to `maxDepth` folders below
 * `root` are covered (the deepest today are three). `forbid` adds patterns (regexes of the import
 * string, npm packages included) refused with the same message at every depth.
 */
function layerRules({ name, root, allow = [], deny = [], forbid = [], message, maxDepth = 12 }) {
  const rootParts = root.split('/')
  const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const blocks = []
  for (let below = 0; below <= maxDepth; below++) {
    const depth = rootParts.length + below
    const patterns = []
    // An import with exactly `up` leading `../` resolves to base/<rest>.
    for (let up = below + 1; up <= depth; up++) {
      const base = rootParts.slice(0, depth - up).join('/')
      const within = (folder) => (base === '' ? folder : folder.startsWith(`${base}/`) ? folder.slice(base.length + 1) : null)
      const prefix = `^(\\./)?(\\.\\./){${up}}(?!\\.\\./)`
      if (deny.length > 0) {
        const denied = deny.map(within).filter((f) => f !== null)
        if (denied.length > 0) patterns.push(`${prefix}(${denied.map((f) => escape(f.replace(/\/$/, ''))).join('|')})(/|$)`)
      } else {
        const allowed = [`${root}/`, ...allow].map(within).filter((f) => f !== null)
        patterns.push(allowed.length > 0 ? `${prefix}(?!${allowed.map(escape).join('|')})` : prefix)
      }
    }
    // Out of the repository altogether.
    patterns.push(`^(\\./)?(\\.\\./){${depth + 1}}`, ...forbid)
    blocks.push({
      name: `layers/${name}/depth-${below}`,
      files: [`${root}/${'*/'.repeat(below)}*`],
      rules: {
        'no-restricted-imports': ['error', { patterns: patterns.map((regex) => ({ regex, message })) }],
      },
    })
  }
  return blocks
}

// Leading underscores name what is left unused on purpose (a rest sibling dropped from a copy,
// a parameter an interface requires).
const unusedVars = {
  argsIgnorePattern: '^_',
  varsIgnorePattern: '^_',
  caughtErrorsIgnorePattern: '^_',
  destructuredArrayIgnorePattern: '^_',
  ignoreRestSiblings: true,
}

/** Formatting: what `eslint --fix` rewrites. */
const formatting = {
  // Core's spacing rules inside brackets: @stylistic deprecates its own for list-style,
  // which also dictates line breaks between items that the code places freely.
  'array-bracket-spacing': ['error', 'never'],
  'object-curly-spacing': ['error', 'always'],
  '@stylistic/arrow-parens': ['error', 'always'],
  '@stylistic/arrow-spacing': 'error',
  '@stylistic/block-spacing': 'error',
  '@stylistic/brace-style': ['error', '1tbs', { allowSingleLine: true }],
  '@stylistic/comma-dangle': ['error', 'always-multiline'],
  '@stylistic/comma-spacing': 'error',
  '@stylistic/comma-style': 'error',
  '@stylistic/computed-property-spacing': 'error',
  '@stylistic/dot-location': ['error', 'property'],
  '@stylistic/eol-last': 'error',
  '@stylistic/function-call-spacing': 'error',
  '@stylistic/generator-star-spacing': ['error', { before: false, after: true }],
  // Code inside `${...}` of a template (htm markup in the console) is indented to the
  // markup around it, and chained ternaries are laid out flat.
  '@stylistic/indent': ['error', 2, { SwitchCase: 1, ignoredNodes: ['ConditionalExpression', 'TemplateLiteral *'] }],
  '@stylistic/key-spacing': 'error',
  '@stylistic/keyword-spacing': 'error',
  '@stylistic/linebreak-style': 'error',
  '@stylistic/lines-between-class-members': ['error', 'always', { exceptAfterSingleLine: true }],
  '@stylistic/new-parens': 'error',
  '@stylistic/no-floating-decimal': 'error',
  '@stylistic/no-multi-spaces': 'error',
  '@stylistic/no-multiple-empty-lines': ['error', { max: 1, maxBOF: 0, maxEOF: 0 }],
  '@stylistic/no-tabs': 'error',
  '@stylistic/no-trailing-spaces': 'error',
  '@stylistic/no-whitespace-before-property': 'error',
  '@stylistic/operator-linebreak': ['error', 'after', { overrides: { '?': 'before', ':': 'before', '|': 'before', '&': 'before' } }],
  '@stylistic/padded-blocks': ['error', 'never'],
  '@stylistic/quote-props': ['error', 'as-needed'],
  '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
  '@stylistic/rest-spread-spacing': 'error',
  '@stylistic/semi': ['error', 'never'],
  '@stylistic/semi-spacing': 'error',
  '@stylistic/space-before-blocks': 'error',
  '@stylistic/space-before-function-paren': ['error', { anonymous: 'always', named: 'never', asyncArrow: 'always' }],
  '@stylistic/space-in-parens': 'error',
  '@stylistic/space-infix-ops': 'error',
  '@stylistic/space-unary-ops': 'error',
  '@stylistic/spaced-comment': ['error', 'always', { markers: ['/'] }],
  '@stylistic/switch-colon-spacing': 'error',
  '@stylistic/template-curly-spacing': 'error',
  '@stylistic/template-tag-spacing': 'error',
  '@stylistic/type-annotation-spacing': 'error',
  '@stylistic/type-generic-spacing': 'error',
  '@stylistic/type-named-tuple-spacing': 'error',
  '@stylistic/wrap-iife': ['error', 'inside'],
  '@stylistic/yield-star-spacing': ['error', 'after'],
}

export default defineConfig(
  {
    ignores: ['dist/', 'data/', 'bench/out/', 'test/artifacts/'],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    name: 'device/node-scripts',
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: globals.node },
  },
  {
    name: 'device/rules',
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', unusedVars],
      // `let { a, b } = ...` where only `b` is reassigned stays one declaration.
      'prefer-const': ['error', { destructuring: 'all' }],
      // A rethrown error names what failed in its message; attaching `cause` would change
      // what callers and logs see.
      'preserve-caught-error': 'off',
    },
  },
  {
    name: 'device/tests-and-benchmarks',
    files: ['test/**', 'bench/**'],
    rules: {
      // Tests and benchmarks poke at answers of any shape.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    name: 'device/formatting',
    plugins: { '@stylistic': stylistic },
    rules: formatting,
  },
  // Layers. Each file falls under at most one of these roots; test/, bench/, models/, infra/
  // and the rest of runtime/ are not confined.
  // Handlers reach state only through the services on `ctx`: no database schema, no drizzle.
  layerRules({
    name: 'functions',
    root: 'functions',
    allow: ['shared/'],
    forbid: ['(^|/)shared/db(/|$)', '^drizzle-orm(/|$)', '^@libsql/'],
    message: 'functions/ may import only shared/ (and npm packages), never the database (shared/db/, drizzle-orm, @libsql): handlers reach state through a service on ctx.',
  }),
  layerRules({
    name: 'shared',
    root: 'shared',
    deny: ['runtime/', 'functions/', 'test/', 'bench/'],
    message: 'shared/ must not import runtime/, functions/, test/ or bench/.',
  }),
  layerRules({
    name: 'console',
    root: 'runtime/console',
    allow: ['runtime/client/', 'shared/'],
    message: 'The console reaches the device only through runtime/client/: it may import runtime/client/, runtime/console/ and shared/.',
  }),
  layerRules({
    name: 'cli',
    root: 'runtime/cli',
    allow: ['runtime/client/', 'shared/'],
    message: 'The CLI reaches the device only through runtime/client/: it may import runtime/client/, runtime/cli/ and shared/.',
  }),
  layerRules({
    name: 'sidecar',
    root: 'runtime/sidecar',
    allow: ['shared/', 'models/'],
    message: 'The inference sidecar is a process of its own: it may import runtime/sidecar/, shared/ and models/, nothing of the server.',
  }),
  {
    // The server process loads sharp (libvips) on its first use, not at every start
    // (runtime/load-sharp.ts; bench/README.md "Device start").
    name: 'server/lazy-sharp',
    files: ['runtime/**/*.ts', 'functions/**/*.ts', 'shared/**/*.ts'],
    ignores: ['runtime/sidecar/**', 'runtime/load-sharp.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [{ name: 'sharp', allowTypeImports: true, message: 'The server loads sharp on first use: `const sharp = await loadSharp()` (runtime/load-sharp.ts). Only the sidecar imports it.' }] }],
    },
  },
)
