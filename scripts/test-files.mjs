// The node:test files of a checkout, named one by one: Node 22+ reads `--test` arguments as
// files or globs (a directory is not expanded) and Node 20 has no globs.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

export const testFiles = (root) =>
  readdirSync(join(root, '__test__'))
    .filter((f) => f.endsWith('.test.mjs'))
    .map((f) => `__test__/${f}`)
