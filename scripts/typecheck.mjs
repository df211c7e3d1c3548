// Type tests: plugins.ts must compile under --strict; missing_callback.ts must not;
// under --module node16 with the declarations checked, index.d.ts reports no error.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import { readFileSync } from 'node:fs'

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '__test__', 'types')
const tsc = join(dir, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc')
const run = (args) => spawnSync(process.execPath, [tsc, ...args], { encoding: 'utf8' })

let failed = 0
const good = run(['-p', join(dir, 'tsconfig.json')])
if (good.status === 0) console.log('ok - index.d.ts: both plugins are BasePlugins under tsc --strict')
else {
  failed++
  console.log('not ok - plugins.ts does not compile:\n' + good.stdout + good.stderr)
}
const bad = run(['-p', join(dir, 'tsconfig.bad.json')])
if (bad.status !== 0 && /missing the following properties|is missing in type/.test(bad.stdout)) {
  console.log('ok - a class missing a callback is rejected')
} else {
  failed++
  console.log('not ok - missing_callback.ts compiled or failed for another reason:\n' + bad.stdout + bad.stderr)
}
// @google/adk's own declarations name optional packages that are not
// installed, so only errors reported in index.d.ts count here.
// ADK 1.x's BasePlugin has no node callbacks, which index.d.ts names (the
// peer range starts at 2.0.0; the check above skips declarations).
const adkMajor = Number(JSON.parse(readFileSync(join(dir, '..', '..', 'node_modules', '@google', 'adk', 'package.json'), 'utf8')).version.split('.')[0])
const node16 = adkMajor >= 2 ? run(['-p', join(dir, 'tsconfig.node16.json')]) : { status: 0, stdout: '' }
const ours = node16.stdout.split('\n').filter((line) => /^(\.\.[\\/])*index\.d\.ts\(/.test(line))
// It ran: it passed, or it reported errors (of @google/adk's dependencies).
const ran = node16.status === 0 || /error TS/.test(node16.stdout)
if (ran && ours.length === 0) {
  console.log(`ok - index.d.ts has no error under --module node16 without skipLibCheck${adkMajor >= 2 ? '' : ' # skip: @google/adk 1.x'}`)
} else {
  failed++
  console.log('not ok - index.d.ts under --module node16:\n' + ours.join('\n'))
}
console.log(`typecheck: ${3 - failed} passed, ${failed} failed`)
process.exit(failed ? 1 : 0)
