// Type tests: plugins.ts must compile under --strict; missing_callback.ts must not.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'

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
console.log(`typecheck: ${2 - failed} passed, ${failed} failed`)
process.exit(failed ? 1 : 0)
