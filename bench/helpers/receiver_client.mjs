// Starts bench/helpers/receiver_process.mjs and talks to it.
//   const rx = await startReceiverProcess()
//   rx.endpoint; await rx.reset(); await rx.waitForSpans(n, ms); await rx.stats(); await rx.stop()
import { fork } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'

const script = join(dirname(fileURLToPath(import.meta.url)), 'receiver_process.mjs')

export async function startReceiverProcess({ readyTimeoutMs = 15_000 } = {}) {
  const child = fork(script, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] })
  let nextId = 0
  const pending = new Map()
  let exited = false
  child.on('exit', () => {
    exited = true
    for (const { reject } of pending.values()) reject(new Error('receiver process exited'))
    pending.clear()
  })
  const endpoint = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('receiver process not ready')), readyTimeoutMs)
    child.once('message', (msg) => {
      clearTimeout(timer)
      if (msg?.type === 'ready') resolve(msg.endpoint)
      else reject(new Error(`unexpected message ${JSON.stringify(msg)}`))
    })
    child.once('error', reject)
  })
  child.on('message', (msg) => {
    const p = pending.get(msg?.id)
    if (p) {
      pending.delete(msg.id)
      p.resolve(msg)
    }
  })
  const ask = (type) =>
    new Promise((resolve, reject) => {
      if (exited) return reject(new Error('receiver process exited'))
      const id = nextId++
      pending.set(id, { resolve, reject })
      child.send({ type, id })
    })

  const stats = async () => (await ask('stats')).stats
  return {
    endpoint,
    pid: child.pid,
    stats,
    reset: () => ask('reset'),
    /** Polls until n spans were received (answered 2xx); returns the stats either way, with `timedOut`. */
    async waitForSpans(n, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs
      for (;;) {
        const s = await stats()
        if (s.spansAccepted >= n) return { ...s, timedOut: false }
        if (Date.now() > until) return { ...s, timedOut: true }
        await sleep(50)
      }
    },
    async stop() {
      if (exited) return
      child.send({ type: 'stop' })
      await Promise.race([new Promise((r) => child.once('exit', r)), sleep(3000)])
      if (!exited) child.kill('SIGKILL')
    },
  }
}
