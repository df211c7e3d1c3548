// A throwaway npm registry (Verdaccio) on loopback for the install round trip.
//
//   const registry = await startRegistry()        // registry.url, registry.npmrc
//   await registry.publish(tarball, cwd)          // as the release workflow publishes
//   await registry.stop()
//
// Our packages (adk-native-plugins and adk-native-plugins-*) are served only from
// its own storage, never proxied, so a platform package that was not published is
// a plain 404; every other package is proxied to the registry that
// `npm config get registry` names when the test runs.
//
// Verdaccio is installed on first use into .cache/verdaccio (gitignored) from the
// pinned scripts/verdaccio/package-lock.json, not as a devDependency: it is a
// 327-package, 58 MB server used by one test, so it stays out of the project's
// lockfile and out of every contributor's `npm ci`.
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'

const repo = fileURLToPath(new URL('../..', import.meta.url))
const pinned = join(repo, 'scripts', 'verdaccio')
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

/** Runs npm and returns its stdout; throws with its output on failure. */
export function npmRun(args, { cwd, env = process.env, timeoutMs = 10 * 60_000 } = {}) {
  const r = spawnSync(npm, args, { cwd, env, encoding: 'utf8', timeout: timeoutMs, shell: process.platform === 'win32' })
  if (r.status !== 0) {
    throw new Error(`npm ${args.join(' ')} failed (${r.signal ?? r.status}) in ${cwd}:\n${r.stdout}\n${r.stderr}`)
  }
  return r.stdout
}

/** Installs the pinned Verdaccio into .cache/verdaccio unless it is already there; returns its bin. */
export function ensureVerdaccio() {
  const dir = resolve(process.env.VERDACCIO_DIR || join(repo, '.cache', 'verdaccio'))
  const bin = join(dir, 'node_modules', 'verdaccio', 'bin', 'verdaccio')
  const lock = readFileSync(join(pinned, 'package-lock.json'))
  const stamp = createHash('sha256').update(lock).digest('hex').slice(0, 16)
  const stampFile = join(dir, '.stamp')
  if (existsSync(bin) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return bin
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  for (const f of ['package.json', 'package-lock.json']) cpSync(join(pinned, f), join(dir, f))
  npmRun(['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: dir })
  writeFileSync(stampFile, stamp)
  return bin
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen({ host: '127.0.0.1', port: 0 }, () => {
      const { port } = srv.address()
      srv.close(() => resolvePort(port))
    })
  })
}

/** The registry npm uses here, read at run time (never written into the repository). */
export function upstreamRegistry() {
  return npmRun(['config', 'get', 'registry'], { cwd: tmpdir() }).trim()
}

export async function startRegistry({ readyTimeoutMs = 60_000 } = {}) {
  const bin = ensureVerdaccio()
  const root = mkdtempSync(join(tmpdir(), 'adk-native-plugins-registry-'))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}/`
  const ours = { access: '$all', publish: '$authenticated', unpublish: '$authenticated' }
  // JSON is YAML: no YAML writer needed.
  const config = {
    storage: join(root, 'storage'),
    auth: { htpasswd: { file: join(root, 'htpasswd'), max_users: 10 } },
    // One slow or failed upstream request must not mark the uplink offline for the rest of the install.
    uplinks: { upstream: { url: upstreamRegistry(), timeout: '60s', maxage: '30m', max_fails: 20, fail_timeout: '5s' } },
    packages: {
      'adk-native-plugins': ours,
      'adk-native-plugins-*': ours,
      '**': { access: '$all', publish: '$authenticated', proxy: 'upstream' },
    },
    // A debug build of the addon is ~46 MB: Verdaccio's 10 MB default would refuse it (413).
    max_body_size: '200mb',
    server: { keepAliveTimeout: 60 },
    log: { type: 'stdout', format: 'pretty', level: 'warn' },
  }
  const configFile = join(root, 'config.yaml')
  writeFileSync(configFile, JSON.stringify(config, null, 2))
  const logFile = join(root, 'verdaccio.log')
  const log = []
  const child = spawn(process.execPath, [bin, '--config', configFile, '--listen', `127.0.0.1:${port}`], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout.on('data', (d) => log.push(String(d)))
  child.stderr.on('data', (d) => log.push(String(d)))
  const killOnExit = () => child.kill('SIGKILL')
  process.on('exit', killOnExit)

  const stop = async () => {
    process.off('exit', killOnExit)
    if (child.exitCode === null) {
      child.kill('SIGTERM')
      await Promise.race([new Promise((r) => child.once('exit', r)), sleep(5000)])
      if (child.exitCode === null) child.kill('SIGKILL')
    }
    writeFileSync(logFile, log.join(''))
    rmSync(root, { recursive: true, force: true })
  }

  try {
    const deadline = Date.now() + readyTimeoutMs
    for (;;) {
      if (child.exitCode !== null) throw new Error(`verdaccio exited (${child.exitCode}):\n${log.join('')}`)
      try {
        if ((await fetch(`${url}-/ping`)).ok) break
      } catch {}
      if (Date.now() > deadline) throw new Error(`verdaccio not ready in ${readyTimeoutMs} ms:\n${log.join('')}`)
      await sleep(200)
    }
    // A user, through the same endpoint `npm adduser` uses; its token authorises publish.
    const res = await fetch(`${url}-/user/org.couchdb.user:release-test`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'release-test', password: 'release-test-password' }),
    })
    const { token } = await res.json()
    if (!res.ok || !token) throw new Error(`verdaccio adduser failed: ${res.status}`)
    // A project .npmrc: points npm at this registry and keeps the user's other settings (CA, cache).
    const authKey = url.replace(/^http:/, '')
    const npmrc = `registry=${url}\n${authKey}:_authToken=${token}\n`
    return {
      url,
      npmrc,
      log: () => log.join(''),
      /** Publishes a tarball as `npm publish` does in the release workflow (provenance needs CI's OIDC, so not here). */
      publish(tarball, cwd) {
        return npmRun(['publish', tarball, '--access', 'public'], { cwd })
      },
      stop,
    }
  } catch (err) {
    await stop()
    throw err
  }
}
