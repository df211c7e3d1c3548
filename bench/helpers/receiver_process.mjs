// The OTLP receiver in its own process, so that decoding the benchmark's spans
// costs the measured process nothing. Counts spans (and distinct span ids, to
// catch duplicates) without keeping them.
//
// Forked (see receiver_client.mjs): IPC messages
//   → { type: 'ready', endpoint }           once listening
//   ← { type: 'stats', id }   → { type: 'stats', id, stats }
//   ← { type: 'reset' }       → { type: 'reset', id }
//   ← { type: 'stop' }        exits
// Standalone: `node bench/helpers/receiver_process.mjs` prints the endpoint and stats every 5 s.
import { startReceiver } from '../../__test__/helpers/otlp_receiver.mjs'

const ids = new Set()
let duplicates = 0
const answers = {}
const rx = await startReceiver({
  record: false,
  onSpanId: (id) => {
    if (ids.has(id)) duplicates++
    else ids.add(id)
  },
  onRequest: (rec) => {
    answers[rec.answer] = (answers[rec.answer] ?? 0) + 1
  },
})

function stats() {
  return { ...rx.counts, uniqueSpanIds: ids.size, duplicates, answers: { ...answers } }
}

function reset() {
  rx.reset()
  ids.clear()
  duplicates = 0
  for (const k of Object.keys(answers)) delete answers[k]
}

if (process.send) {
  process.on('message', async (msg) => {
    if (msg?.type === 'stats') process.send({ type: 'stats', id: msg.id, stats: stats() })
    else if (msg?.type === 'reset') {
      reset()
      process.send({ type: 'reset', id: msg.id })
    } else if (msg?.type === 'stop') {
      await rx.stop()
      process.exit(0)
    }
  })
  process.on('disconnect', () => process.exit(0)) // parent gone
  process.send({ type: 'ready', endpoint: rx.endpoint })
} else {
  console.log(`OTLP receiver at ${rx.endpoint}`)
  setInterval(() => console.log(JSON.stringify(stats())), 5000)
}
