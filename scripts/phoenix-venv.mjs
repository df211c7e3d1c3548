// Installs Arize Phoenix (a real OTLP backend) into a cached virtualenv for the
// export tests and benchmarks. Everything comes from PyPI with the ordinary pip.
//
//   node scripts/phoenix-venv.mjs          install (or confirm) and print the paths
//
// The venv lives in <repo>/.cache/phoenix-venv (gitignored) or $PHOENIX_VENV_DIR.
// It is reused when its stamp matches PHOENIX_VERSION and the constraints file;
// otherwise it is rebuilt. Concurrent callers (node --test runs files in
// parallel) serialise on a lock directory so only one of them runs pip.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'

/** The pinned Phoenix release; scripts/phoenix-constraints.txt pins its whole environment. */
export const PHOENIX_VERSION = '20.26.1'

const here = dirname(fileURLToPath(import.meta.url))
const repo = resolve(here, '..')
const constraintsFile = join(here, 'phoenix-constraints.txt')

export function venvDir() {
  return resolve(process.env.PHOENIX_VENV_DIR || join(repo, '.cache', 'phoenix-venv'))
}

const isWindows = process.platform === 'win32'
const binDir = (venv) => join(venv, isWindows ? 'Scripts' : 'bin')
const exe = (name) => (isWindows ? `${name}.exe` : name)

function stampText() {
  const constraints = readFileSync(constraintsFile)
  const digest = createHash('sha256').update(constraints).digest('hex').slice(0, 16)
  return `arize-phoenix==${PHOENIX_VERSION} constraints:${digest}\n`
}

function run(cmd, args, { env = process.env, timeoutMs } = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { out += d })
    const timer = timeoutMs ? setTimeout(() => child.kill('SIGKILL'), timeoutMs) : null
    child.on('error', (err) => { if (timer) clearTimeout(timer); reject(err) })
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer)
      if (code === 0) resolvePromise(out)
      else reject(new Error(`${cmd} ${args.join(' ')} failed (${signal ?? code}):\n${out.slice(-4000)}`))
    })
  })
}

/** A Python >= 3.11 (Phoenix's floor): $PHOENIX_PYTHON, else the first of python3.11..python3. */
async function findPython() {
  const candidates = process.env.PHOENIX_PYTHON
    ? [process.env.PHOENIX_PYTHON]
    : ['python3.11', 'python3.12', 'python3.13', 'python3.14', 'python3', 'python']
  const problems = []
  for (const py of candidates) {
    try {
      const v = (await run(py, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'])).trim()
      const [maj, min] = v.split('.').map(Number)
      if (maj === 3 && min >= 11 && min <= 14) return py
      problems.push(`${py} is ${v}`)
    } catch (err) {
      problems.push(`${py}: ${err.code ?? err.message.split('\n')[0]}`)
    }
  }
  throw new Error(`Phoenix needs Python 3.11-3.14 with venv; none found (${problems.join('; ')}). Set PHOENIX_PYTHON.`)
}

function pidAlive(pid) {
  try { process.kill(pid, 0); return true } catch (err) { return err.code === 'EPERM' }
}

/** mkdir-based lock; a lock whose owner died is taken over. */
async function withLock(lockDir, timeoutMs, fn) {
  const deadline = Date.now() + timeoutMs
  mkdirSync(dirname(lockDir), { recursive: true })
  for (;;) {
    try {
      mkdirSync(lockDir)
      writeFileSync(join(lockDir, 'pid'), String(process.pid))
      break
    } catch (err) {
      if (err.code !== 'EEXIST') throw err
      let owner = NaN
      try { owner = Number(readFileSync(join(lockDir, 'pid'), 'utf8')) } catch {}
      // No pid yet means the owner is between mkdir and write; give it a moment.
      if (Number.isInteger(owner) && owner > 0 && !pidAlive(owner)) {
        rmSync(lockDir, { recursive: true, force: true })
        continue
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockDir} (held by pid ${owner})`)
      await sleep(500)
    }
  }
  try {
    return await fn()
  } finally {
    rmSync(lockDir, { recursive: true, force: true })
  }
}

function isReady(venv) {
  const stamp = join(venv, '.adk-phoenix-stamp')
  return existsSync(join(binDir(venv), exe('phoenix'))) && existsSync(stamp) && readFileSync(stamp, 'utf8') === stampText()
}

/**
 * Makes sure the pinned Phoenix is installed; returns
 * { venv, python, phoenix, installed: boolean, seconds }.
 * `installTimeoutMs` bounds pip (default 15 min: a cold install took ~50 s here).
 */
export async function ensurePhoenixVenv({ log = () => {}, installTimeoutMs = 15 * 60_000 } = {}) {
  const venv = venvDir()
  const result = (installed, seconds) => ({
    venv,
    python: join(binDir(venv), exe('python')),
    phoenix: join(binDir(venv), exe('phoenix')),
    installed,
    seconds,
  })
  if (isReady(venv)) return result(false, 0)
  const started = performance.now()
  return withLock(`${venv}.lock`, installTimeoutMs + 60_000, async () => {
    if (isReady(venv)) return result(false, (performance.now() - started) / 1000) // another process did it
    const python = await findPython()
    log(`installing arize-phoenix==${PHOENIX_VERSION} into ${venv} with ${python} (one time)`)
    rmSync(venv, { recursive: true, force: true })
    await run(python, ['-m', 'venv', venv], { timeoutMs: 120_000 })
    const pip = join(binDir(venv), exe('python'))
    const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' }
    await run(
      pip,
      ['-m', 'pip', 'install', '--quiet', '--retries', '5', '--timeout', '60',
        '-c', constraintsFile, `arize-phoenix==${PHOENIX_VERSION}`],
      { env, timeoutMs: installTimeoutMs },
    )
    writeFileSync(join(venv, '.adk-phoenix-stamp'), stampText())
    const seconds = (performance.now() - started) / 1000
    log(`installed arize-phoenix==${PHOENIX_VERSION} in ${seconds.toFixed(1)} s`)
    return result(true, seconds)
  })
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensurePhoenixVenv({ log: (m) => console.log(m) }).then(
    (r) => console.log(JSON.stringify(r, null, 2)),
    (err) => { console.error(err.message); process.exit(1) },
  )
}
