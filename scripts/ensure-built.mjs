// Builds the addon from source when this checkout has none yet, so the
// README's `npm install && npm run demo` works in a fresh clone (there is no
// `prepare` script: a registry install must never run cargo).
//
//   node scripts/ensure-built.mjs     build (release) if no .node is here
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/** True when the checkout holds no built addon. */
export function needsBuild() {
  return !readdirSync(repo).some((f) => f.endsWith('.node'))
}

if (process.argv[1] === fileURLToPath(import.meta.url) && needsBuild()) {
  console.log('No native addon in this checkout yet: building it from source (npm run build).')
  const r = spawnSync('npm', ['run', 'build'], { cwd: repo, stdio: 'inherit' })
  process.exit(r.status ?? 1)
}
