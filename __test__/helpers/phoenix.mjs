// A real Arize Phoenix server on loopback for the export tests.
//
//   const phoenix = await startPhoenix()
//   ... export OTLP/HTTP protobuf to phoenix.otlpUrl (= `${phoenix.url}/v1/traces`) ...
//   const spans = await phoenix.waitForSpans('default', 5)
//   await phoenix.stop()
//
// Phoenix files a span under the project named by, in order: the `x-project-name`
// request header, the resource attribute `openinference.project.name`, else
// `default` (service.name plays no part). Its OTLP/HTTP endpoint takes only
// `Content-Type: application/x-protobuf` (exactly; 415 otherwise), optionally gzip
// or deflate. Spans are written to its database asynchronously after the 200, so
// read them back with waitForSpans (polls GET /v1/projects/<name>/spans).
//
// The first call installs the pinned Phoenix into a cached venv
// (scripts/phoenix-venv.mjs, ~50 s cold); later calls reuse it.
import { spawn } from 'node:child_process'
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { ensurePhoenixVenv, PHOENIX_VERSION } from '../../scripts/phoenix-venv.mjs'

export { PHOENIX_VERSION }

/** A port nothing listens on right now (all interfaces: Phoenix's gRPC binds [::]). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen({ port: 0 }, () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

function tail(file, bytes = 6000) {
  try {
    const text = readFileSync(file, 'utf8')
    return text.slice(-bytes)
  } catch {
    return '(no log)'
  }
}

/** The child's environment: ours minus anything that could send Phoenix elsewhere. */
function phoenixEnv(overrides) {
  const env = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('PHOENIX_') || k.startsWith('OTEL_') || k.startsWith('PYTHON')) continue
    env[k] = v
  }
  return { ...env, ...overrides }
}

const live = new Set()
let exitHookInstalled = false
function killGroup(child, signal) {
  try { process.kill(-child.pid, signal) } catch {}
}
function installExitHook() {
  if (exitHookInstalled) return
  exitHookInstalled = true
  // A test that crashes or is killed must not leave a server behind.
  const killAll = () => { for (const child of live) killGroup(child, 'SIGKILL') }
  process.on('exit', killAll)
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
    process.once(signal, () => {
      killAll()
      process.exit(code)
    })
  }
}

/**
 * Starts Phoenix on 127.0.0.1 with a fresh temporary database.
 * Options: readyTimeoutMs (default 120 s after install), installTimeoutMs, log (fn for progress lines).
 * Returns { url, otlpUrl, port, grpcPort, workingDir, logFile, install, startSeconds,
 *           projects(), projectSpans(name), waitForSpans(name, n, timeoutMs), stop() }.
 */
export async function startPhoenix({ readyTimeoutMs = 120_000, installTimeoutMs, log = () => {} } = {}) {
  const install = await ensurePhoenixVenv({ log, installTimeoutMs })
  // A free port can be taken between our probe and Phoenix's bind: retry on that only.
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(install, { readyTimeoutMs, log })
    } catch (err) {
      if (attempt >= 3 || !/address already in use|Errno 98|EADDRINUSE/i.test(err.message)) throw err
      log(`phoenix port clash, retrying (${attempt})`)
    }
  }
}

async function launch(install, { readyTimeoutMs, log }) {
  const port = await freePort()
  let grpcPort = await freePort()
  while (grpcPort === port) grpcPort = await freePort()
  const workingDir = mkdtempSync(join(tmpdir(), 'adk-phoenix-'))
  const logFile = join(workingDir, 'phoenix.log')
  const url = `http://127.0.0.1:${port}`

  const env = phoenixEnv({
    PHOENIX_WORKING_DIR: workingDir, // sqlite database lives here
    PHOENIX_HOST: '127.0.0.1',
    PHOENIX_PORT: String(port),
    PHOENIX_GRPC_PORT: String(grpcPort), // cannot be turned off; a free port avoids clashes on 4317
    PHOENIX_TELEMETRY_ENABLED: 'false',
    PHOENIX_ALLOW_EXTERNAL_RESOURCES: 'false',
    PHOENIX_DISABLE_AGENT_ASSISTANT: 'true',
    PHOENIX_ENABLE_MCP_SERVER: 'false',
    PHOENIX_AGENTS_DISABLE_WEB_ACCESS: 'true',
    PHOENIX_AGENTS_DISABLE_BASH: 'true',
    PHOENIX_AGENTS_DISABLE_GITHUB: 'true',
    PHOENIX_ENABLE_PROMETHEUS: 'false',
    PHOENIX_DISABLE_RATE_LIMIT: 'true',
    PHOENIX_LOG_SQL: 'false',
    PYTHONUNBUFFERED: '1',
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  })

  const started = performance.now()
  const fd = openSync(logFile, 'a')
  const child = spawn(install.phoenix, ['serve'], {
    env,
    cwd: workingDir,
    detached: true, // own process group: stop() kills uvicorn's workers with it
    stdio: ['ignore', fd, fd],
  })
  closeSync(fd)
  installExitHook()
  live.add(child)
  let exited = null
  const exitPromise = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      exited = { code, signal }
      live.delete(child)
      resolve(exited)
    })
    child.on('error', (err) => {
      exited = { error: err }
      live.delete(child)
      resolve(exited)
    })
  })

  let stopped = false
  async function stop() {
    if (stopped) return
    stopped = true
    if (!exited) {
      killGroup(child, 'SIGTERM')
      let timer
      const t = new Promise((resolve) => { timer = setTimeout(resolve, 5_000, 'timeout') })
      const outcome = await Promise.race([exitPromise, t])
      clearTimeout(timer)
      if (outcome === 'timeout') {
        killGroup(child, 'SIGKILL')
        await exitPromise
      }
    }
    // Workers may outlive the leader for a moment; make sure the group is gone.
    killGroup(child, 'SIGKILL')
    rmSync(workingDir, { recursive: true, force: true })
  }

  // Ready = /healthz answers 200 (after migrations, when the OTLP route is live).
  const deadline = Date.now() + readyTimeoutMs
  for (;;) {
    if (exited) {
      const why = exited.error ? exited.error.message : `exit ${exited.signal ?? exited.code}`
      const text = tail(logFile)
      await stop()
      throw new Error(`phoenix serve stopped before it was ready (${why}); log tail:\n${text}`)
    }
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })
      if (res.ok) break
    } catch {}
    if (Date.now() > deadline) {
      const text = tail(logFile)
      await stop()
      throw new Error(`phoenix serve not ready within ${readyTimeoutMs} ms; log tail:\n${text}`)
    }
    await sleep(200)
  }
  const startSeconds = (performance.now() - started) / 1000
  log(`phoenix ${PHOENIX_VERSION} ready at ${url} in ${startSeconds.toFixed(1)} s`)

  async function getJson(path) {
    const res = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(10_000) })
    if (res.status === 404) return null
    if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`)
    return res.json()
  }

  /** Names of the projects Phoenix knows. */
  async function projects() {
    const out = []
    let cursor = null
    do {
      const body = await getJson(`/v1/projects?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      for (const p of body?.data ?? []) out.push(p.name)
      cursor = body?.next_cursor ?? null
    } while (cursor)
    return out
  }

  /**
   * Every span stored under `projectName`, oldest first, as Phoenix's REST API
   * gives them: { name, context: { trace_id, span_id }, parent_id, span_kind,
   * start_time, end_time, status_code, status_message, attributes, events }.
   * `[]` when the project does not exist (yet).
   */
  async function projectSpans(projectName = 'default') {
    const out = []
    let cursor = null
    do {
      const q = new URLSearchParams({ limit: '1000', sort: 'id', order: 'asc' })
      if (cursor) q.set('cursor', cursor)
      const body = await getJson(`/v1/projects/${encodeURIComponent(projectName)}/spans?${q}`)
      if (!body) return out
      out.push(...body.data)
      cursor = body.next_cursor ?? null
    } while (cursor)
    return out
  }

  /** Polls until `projectName` holds at least n spans; throws with what it saw after timeoutMs. */
  async function waitForSpans(projectName, n, timeoutMs = 20_000) {
    const until = Date.now() + timeoutMs
    let spans = []
    for (;;) {
      spans = await projectSpans(projectName)
      if (spans.length >= n) return spans
      if (Date.now() > until) {
        throw new Error(
          `Phoenix project '${projectName}' has ${spans.length} spans, expected ${n} within ${timeoutMs} ms ` +
            `(projects: ${(await projects()).join(', ')}); log tail:\n${tail(logFile, 3000)}`,
        )
      }
      await sleep(150)
    }
  }

  return {
    url,
    otlpUrl: `${url}/v1/traces`,
    port,
    grpcPort,
    workingDir,
    logFile,
    install,
    startSeconds,
    version: PHOENIX_VERSION,
    projects,
    projectSpans,
    waitForSpans,
    stop,
  }
}
