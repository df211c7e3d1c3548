// `npm run release:local -- <dir>`: writes into <dir> the npm tarballs the release
// workflow would publish, for the binaries present here: one per platform whose
// `adk-native-plugins.<platform>.node` is in the repository root (the host's after
// `npm run build`; others from cross builds), and the main package.
//
// It runs the workflow's own steps on a staged copy, so the repository is left as
// it was: `napi artifacts` moves the binaries into npm/<platform>/, `napi prepublish
// -t npm` writes optionalDependencies on every platform package at this version
// (as on publish; the workflow publishes all of them, here only those built), then
// `npm pack` packs each platform package and the main one, as `npm publish` would.
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const outArg = process.argv[2]
if (!outArg) {
  console.error('usage: npm run release:local -- <dir>')
  process.exit(2)
}
const out = resolve(outArg)
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'))
const binaryName = pkg.napi.binaryName
const napiCli = join(repo, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js')
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

function run(cmd, args, cwd) {
  // No GitHub context: prepublish must not try to create a GitHub release.
  const env = { ...process.env }
  delete env.GITHUB_REPOSITORY
  delete env.GITHUB_TOKEN
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', shell: process.platform === 'win32' })
  if (r.status !== 0) {
    console.error(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${r.stdout}\n${r.stderr}`)
    process.exit(1)
  }
  return r.stdout
}

const binaries = readdirSync(repo).filter((f) => f.startsWith(`${binaryName}.`) && f.endsWith('.node'))
if (binaries.length === 0) {
  console.error(`no ${binaryName}.<platform>.node in ${repo}: run \`npm run build\` first`)
  process.exit(1)
}

const stage = mkdtempSync(join(tmpdir(), 'adk-native-plugins-release-'))
try {
  // What npm packs from the main package (package.json `files` plus npm's always-included
  // README/LICENSE), and the platform package folders.
  for (const entry of ['package.json', 'README.md', 'LICENSE', ...pkg.files, 'npm']) {
    if (existsSync(join(repo, entry))) cpSync(join(repo, entry), join(stage, entry), { recursive: true })
  }
  for (const f of readdirSync(join(stage, 'npm'), { recursive: true })) {
    if (String(f).endsWith('.node')) rmSync(join(stage, 'npm', String(f)))
  }
  // The workflow downloads every build job's artifact into ./artifacts.
  mkdirSync(join(stage, 'artifacts'))
  for (const f of binaries) cpSync(join(repo, f), join(stage, 'artifacts', f))

  run(process.execPath, [napiCli, 'artifacts'], stage)
  run(process.execPath, [napiCli, 'prepublish', '-t', 'npm', '--skip-optional-publish', '--no-gh-release'], stage)

  mkdirSync(out, { recursive: true })
  const packed = []
  const pack = (cwd) => {
    const [info] = JSON.parse(run(npm, ['pack', '--json', '--pack-destination', out], cwd))
    packed.push(info)
  }
  for (const platform of readdirSync(join(stage, 'npm')).sort()) {
    const dir = join(stage, 'npm', platform)
    if (existsSync(join(dir, `${binaryName}.${platform}.node`))) pack(dir)
  }
  pack(stage) // the main package last: it is published after its platform packages

  for (const p of packed) {
    const size = statSync(join(out, p.filename)).size
    console.log(`${join(out, p.filename)}  ${(size / 1024).toFixed(0)} KiB packed, ${(p.unpackedSize / 1024).toFixed(0)} KiB unpacked, ${p.entryCount} files`)
  }
} finally {
  rmSync(stage, { recursive: true, force: true })
}
