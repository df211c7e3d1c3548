// A scriptable OTLP/HTTP traces receiver on loopback, for export tests.
//
//   const rx = await startReceiver({ script: [503, 200] })
//   ... export to rx.endpoint (= `${rx.url}/v1/traces`) ...
//   const spans = await rx.waitForSpans(5)      // spans of ACCEPTED (2xx) requests
//   rx.requests                                 // every request: path, headers, decoded body, answer
//   await rx.stop()
//
// Bodies are OTLP ExportTraceServiceRequest protobuf (gunzipped / inflated per
// Content-Encoding), decoded by the small hand-written reader below: no
// dependency, and independent of any encoder under test. Like Phoenix, only
// `Content-Type: application/x-protobuf` is accepted (415 otherwise) unless
// `strictContentType: false`.
//
// Script: one entry per request, in order; when it runs out, `fallback` (200).
//   200 / 503 / ...                 answer with that status (2xx: an empty ExportTraceServiceResponse)
//   { status, headers, body, delayMs }   e.g. { status: 429, headers: { 'retry-after': '1' } }
//   { status, until }               answer once the promise `until` settles (held until then)
//   'hang'                          never answer (the socket is destroyed by stop())
//   'close'                         destroy the connection without answering
//   (record) => entry               decide per request
// `rx.script` is the live array: push to it between phases.
import { createServer } from 'node:http'
import { gunzipSync, inflateSync } from 'node:zlib'

// ---------------------------------------------------------------------------
// Protobuf reader (proto3 wire format), just what OTLP traces use.

const utf8 = new TextDecoder('utf-8')
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

function hex(bytes) {
  let s = ''
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]]
  return s
}

class Reader {
  constructor(buf, start = 0, end = buf.length) {
    this.buf = buf
    this.pos = start
    this.end = end
  }

  done() {
    return this.pos >= this.end
  }

  /** An unsigned varint as a BigInt (exact for 64 bits). */
  varintBig() {
    let result = 0n
    let shift = 0n
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Error('truncated varint')
      const b = this.buf[this.pos++]
      result |= BigInt(b & 0x7f) << shift
      if ((b & 0x80) === 0) return BigInt.asUintN(64, result)
      shift += 7n
    }
    throw new Error('varint longer than 10 bytes')
  }

  /** An unsigned varint that fits in a JS number (tags, lengths, enums, counts). */
  varint() {
    let result = 0
    let mul = 1
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Error('truncated varint')
      const b = this.buf[this.pos++]
      result += (b & 0x7f) * mul
      if ((b & 0x80) === 0) {
        if (result > Number.MAX_SAFE_INTEGER) throw new Error('varint too large')
        return result
      }
      mul *= 128
    }
    throw new Error('varint longer than 10 bytes')
  }

  fixed64() {
    if (this.pos + 8 > this.end) throw new Error('truncated fixed64')
    const lo = BigInt(this.buf[this.pos] | (this.buf[this.pos + 1] << 8) | (this.buf[this.pos + 2] << 16)) +
      BigInt(this.buf[this.pos + 3]) * 0x1000000n
    const hi = BigInt(this.buf[this.pos + 4] | (this.buf[this.pos + 5] << 8) | (this.buf[this.pos + 6] << 16)) +
      BigInt(this.buf[this.pos + 7]) * 0x1000000n
    this.pos += 8
    return (hi << 32n) | lo
  }

  double() {
    if (this.pos + 8 > this.end) throw new Error('truncated double')
    const v = Buffer.from(this.buf.buffer, this.buf.byteOffset + this.pos, 8).readDoubleLE(0)
    this.pos += 8
    return v
  }

  fixed32() {
    if (this.pos + 4 > this.end) throw new Error('truncated fixed32')
    const b = this.buf
    const p = this.pos
    this.pos += 4
    return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16)) + b[p + 3] * 0x1000000
  }

  /** A length-delimited field: returns [start, end) and skips it. */
  span() {
    const len = this.varint()
    const start = this.pos
    if (start + len > this.end) throw new Error('truncated length-delimited field')
    this.pos += len
    return [start, start + len]
  }

  bytes() {
    const [s, e] = this.span()
    return this.buf.subarray(s, e)
  }

  string() {
    const [s, e] = this.span()
    return utf8.decode(this.buf.subarray(s, e))
  }

  sub() {
    const [s, e] = this.span()
    return new Reader(this.buf, s, e)
  }

  skip(wireType) {
    switch (wireType) {
      case 0: this.varintBig(); break
      case 1: this.pos += 8; break
      case 2: this.span(); break
      case 5: this.pos += 4; break
      default: throw new Error(`unsupported wire type ${wireType}`)
    }
    if (this.pos > this.end) throw new Error('truncated field')
  }

  /** Calls fn(fieldNumber, wireType) for each field; fn returns false to have it skipped. */
  fields(fn) {
    while (!this.done()) {
      const tag = this.varint()
      const field = Math.floor(tag / 8)
      const wt = tag & 7
      if (field === 0) throw new Error('field number 0')
      if (fn(field, wt) === false) this.skip(wt)
    }
  }
}

function expectWire(actual, expected, what) {
  if (actual !== expected) throw new Error(`${what}: wire type ${actual}, expected ${expected}`)
}

/** AnyValue → string | boolean | number | bigint (int64 beyond 2^53) | array | object | Uint8Array | undefined. */
function anyValue(r) {
  let v
  r.fields((f, wt) => {
    switch (f) {
      case 1: expectWire(wt, 2, 'AnyValue.string_value'); v = r.string(); return
      case 2: expectWire(wt, 0, 'AnyValue.bool_value'); v = r.varintBig() !== 0n; return
      case 3: {
        expectWire(wt, 0, 'AnyValue.int_value')
        const big = BigInt.asIntN(64, r.varintBig())
        v = big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big
        return
      }
      case 4: expectWire(wt, 1, 'AnyValue.double_value'); v = r.double(); return
      case 5: {
        expectWire(wt, 2, 'AnyValue.array_value')
        const arr = []
        const ar = r.sub()
        ar.fields((af, awt) => {
          if (af !== 1) return false
          expectWire(awt, 2, 'ArrayValue.values')
          arr.push(anyValue(ar.sub()))
        })
        v = arr
        return
      }
      case 6: {
        expectWire(wt, 2, 'AnyValue.kvlist_value')
        v = keyValues(r.sub(), 1)
        return
      }
      case 7: expectWire(wt, 2, 'AnyValue.bytes_value'); v = Uint8Array.from(r.bytes()); return
      default: return false
    }
  })
  return v
}

function keyValue(r) {
  let key = ''
  let value
  r.fields((f, wt) => {
    if (f === 1) { expectWire(wt, 2, 'KeyValue.key'); key = r.string(); return }
    if (f === 2) { expectWire(wt, 2, 'KeyValue.value'); value = anyValue(r.sub()); return }
    return false
  })
  return [key, value]
}

/** A message whose field `fieldNo` is `repeated KeyValue` → plain object (last key wins). */
function keyValues(r, fieldNo) {
  const out = {}
  r.fields((f, wt) => {
    if (f !== fieldNo) return false
    expectWire(wt, 2, 'KeyValue')
    const [k, v] = keyValue(r.sub())
    out[k] = v
  })
  return out
}

function addAttr(target, r) {
  const [k, v] = keyValue(r.sub())
  target[k] = v
}

function resource(r) {
  const out = { attributes: {}, droppedAttributesCount: 0 }
  r.fields((f, wt) => {
    if (f === 1) { expectWire(wt, 2, 'Resource.attributes'); addAttr(out.attributes, r); return }
    if (f === 2) { out.droppedAttributesCount = r.varint(); return }
    return false
  })
  return out
}

function scope(r) {
  const out = { name: '', version: '', attributes: {} }
  r.fields((f, wt) => {
    if (f === 1) { expectWire(wt, 2, 'InstrumentationScope.name'); out.name = r.string(); return }
    if (f === 2) { expectWire(wt, 2, 'InstrumentationScope.version'); out.version = r.string(); return }
    if (f === 3) { expectWire(wt, 2, 'InstrumentationScope.attributes'); addAttr(out.attributes, r); return }
    return false
  })
  return out
}

function status(r) {
  const out = { code: 0 }
  r.fields((f, wt) => {
    if (f === 2) { expectWire(wt, 2, 'Status.message'); out.message = r.string(); return }
    if (f === 3) { expectWire(wt, 0, 'Status.code'); out.code = r.varint(); return }
    return false
  })
  return out
}

function event(r) {
  const out = { timeUnixNano: 0n, name: '', attributes: {} }
  r.fields((f, wt) => {
    if (f === 1) { expectWire(wt, 1, 'Event.time_unix_nano'); out.timeUnixNano = r.fixed64(); return }
    if (f === 2) { expectWire(wt, 2, 'Event.name'); out.name = r.string(); return }
    if (f === 3) { expectWire(wt, 2, 'Event.attributes'); addAttr(out.attributes, r); return }
    return false
  })
  return out
}

function link(r) {
  const out = { traceId: '', spanId: '', attributes: {} }
  r.fields((f, wt) => {
    if (f === 1) { expectWire(wt, 2, 'Link.trace_id'); out.traceId = hex(r.bytes()); return }
    if (f === 2) { expectWire(wt, 2, 'Link.span_id'); out.spanId = hex(r.bytes()); return }
    if (f === 3) { expectWire(wt, 2, 'Link.trace_state'); out.traceState = r.string(); return }
    if (f === 4) { expectWire(wt, 2, 'Link.attributes'); addAttr(out.attributes, r); return }
    return false
  })
  return out
}

/**
 * Span → { traceId, spanId, parentSpanId? (absent on a root), traceState?, flags?, name, kind,
 *          startTimeUnixNano: bigint, endTimeUnixNano: bigint, attributes, droppedAttributesCount,
 *          events, links, status: { code, message? } }
 */
function span(r) {
  const out = {
    traceId: '',
    spanId: '',
    name: '',
    kind: 0,
    startTimeUnixNano: 0n,
    endTimeUnixNano: 0n,
    attributes: {},
    droppedAttributesCount: 0,
    events: [],
    links: [],
    status: { code: 0 },
  }
  r.fields((f, wt) => {
    switch (f) {
      case 1: expectWire(wt, 2, 'Span.trace_id'); out.traceId = hex(r.bytes()); return
      case 2: expectWire(wt, 2, 'Span.span_id'); out.spanId = hex(r.bytes()); return
      case 3: expectWire(wt, 2, 'Span.trace_state'); out.traceState = r.string(); return
      case 4: {
        expectWire(wt, 2, 'Span.parent_span_id')
        const p = r.bytes()
        if (p.length) out.parentSpanId = hex(p)
        return
      }
      case 5: expectWire(wt, 2, 'Span.name'); out.name = r.string(); return
      case 6: expectWire(wt, 0, 'Span.kind'); out.kind = r.varint(); return
      case 7: expectWire(wt, 1, 'Span.start_time_unix_nano'); out.startTimeUnixNano = r.fixed64(); return
      case 8: expectWire(wt, 1, 'Span.end_time_unix_nano'); out.endTimeUnixNano = r.fixed64(); return
      case 9: expectWire(wt, 2, 'Span.attributes'); addAttr(out.attributes, r); return
      case 10: out.droppedAttributesCount = r.varint(); return
      case 11: expectWire(wt, 2, 'Span.events'); out.events.push(event(r.sub())); return
      case 12: out.droppedEventsCount = r.varint(); return
      case 13: expectWire(wt, 2, 'Span.links'); out.links.push(link(r.sub())); return
      case 14: out.droppedLinksCount = r.varint(); return
      case 15: expectWire(wt, 2, 'Span.status'); out.status = status(r.sub()); return
      case 16: expectWire(wt, 5, 'Span.flags'); out.flags = r.fixed32(); return
      default: return false
    }
  })
  return out
}

function scopeSpans(r) {
  const out = { scope: { name: '', version: '', attributes: {} }, spans: [], schemaUrl: '' }
  r.fields((f, wt) => {
    if (f === 1) { expectWire(wt, 2, 'ScopeSpans.scope'); out.scope = scope(r.sub()); return }
    if (f === 2) { expectWire(wt, 2, 'ScopeSpans.spans'); out.spans.push(span(r.sub())); return }
    if (f === 3) { expectWire(wt, 2, 'ScopeSpans.schema_url'); out.schemaUrl = r.string(); return }
    return false
  })
  return out
}

function resourceSpans(r) {
  const out = { resource: { attributes: {}, droppedAttributesCount: 0 }, scopeSpans: [], schemaUrl: '' }
  r.fields((f, wt) => {
    if (f === 1) { expectWire(wt, 2, 'ResourceSpans.resource'); out.resource = resource(r.sub()); return }
    if (f === 2) { expectWire(wt, 2, 'ResourceSpans.scope_spans'); out.scopeSpans.push(scopeSpans(r.sub())); return }
    if (f === 3) { expectWire(wt, 2, 'ResourceSpans.schema_url'); out.schemaUrl = r.string(); return }
    return false
  })
  return out
}

/** Decodes an ExportTraceServiceRequest body → { resourceSpans: [...] }. Throws on malformed input. */
export function decodeExportTraceServiceRequest(bytes) {
  const buf = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)
  const r = new Reader(buf)
  const out = { resourceSpans: [] }
  r.fields((f, wt) => {
    if (f !== 1) return false
    expectWire(wt, 2, 'ExportTraceServiceRequest.resource_spans')
    out.resourceSpans.push(resourceSpans(r.sub()))
  })
  return out
}

/** Every span of a decoded request, each with `resource` (attributes) and `scope` ({name, version}) added. */
export function flattenSpans(decoded) {
  const out = []
  for (const rs of decoded.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        out.push({ ...s, resource: rs.resource.attributes, scope: { name: ss.scope.name, version: ss.scope.version } })
      }
    }
  }
  return out
}

/** Counts spans without building objects (for the bench receiver). */
export function countSpans(bytes, onSpanId) {
  const buf = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)
  let n = 0
  const top = new Reader(buf)
  top.fields((f) => {
    if (f !== 1) return false
    const rs = top.sub()
    rs.fields((f2) => {
      if (f2 !== 2) return false
      const ss = rs.sub()
      ss.fields((f3) => {
        if (f3 !== 2) return false
        n++
        if (onSpanId) {
          const sp = ss.sub()
          sp.fields((f4) => {
            if (f4 !== 2) return false
            onSpanId(hex(sp.bytes()))
          })
        } else {
          ss.span()
        }
      })
    })
  })
  return n
}

// ---------------------------------------------------------------------------
// The HTTP server.

function decodeBody(raw, encoding) {
  const enc = (encoding ?? '').trim().toLowerCase()
  if (enc === '' || enc === 'identity') return raw
  if (enc === 'gzip' || enc === 'x-gzip') return gunzipSync(raw)
  if (enc === 'deflate') return inflateSync(raw)
  throw new Error(`unsupported content-encoding ${encoding}`)
}

function normaliseEntry(entry) {
  if (typeof entry === 'number') return { status: entry }
  if (entry === 'hang' || entry === 'close') return { action: entry }
  if (entry && typeof entry === 'object') return entry
  throw new Error(`bad receiver script entry: ${String(entry)}`)
}

/**
 * Starts the receiver. Options:
 *   script            entries as above (default [])
 *   fallback          entry once the script is used up (default 200)
 *   path              the traces path (default '/v1/traces'; other paths get 404)
 *   strictContentType answer 415 unless Content-Type is exactly application/x-protobuf (default true)
 *   record            keep decoded bodies and spans (default true; false = counts only)
 *   onRequest         (record) => void, called for each request after it is decoded
 *   onSpanId          (hexSpanId) => void, called for each span of each decoded request (both modes)
 */
export async function startReceiver({
  script = [],
  fallback = 200,
  path = '/v1/traces',
  strictContentType = true,
  record = true,
  onRequest,
  onSpanId,
  host = '127.0.0.1',
  port = 0,
} = {}) {
  const requests = []
  const accepted = [] // spans from requests answered 2xx, in arrival order
  const counts = { requests: 0, spansReceived: 0, spansAccepted: 0, bytes: 0 }
  const sockets = new Set()
  const waiters = new Set()
  let stopped = false

  const notify = () => {
    for (const w of waiters) w()
  }

  const server = createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('error', () => {})
    req.on('end', () => {
      const raw = Buffer.concat(chunks)
      const rec = {
        index: counts.requests++,
        method: req.method,
        path: req.url,
        headers: { ...req.headers },
        contentType: req.headers['content-type'],
        contentEncoding: req.headers['content-encoding'],
        bytes: raw.length,
        receivedAt: Date.now(),
        body: null,
        spanCount: 0,
        error: undefined,
        answer: undefined,
      }
      counts.bytes += raw.length

      let entry
      let spans = []
      if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== path) {
        entry = { status: 404 }
        rec.error = `unexpected ${req.method} ${req.url}`
      } else if (strictContentType && rec.contentType !== 'application/x-protobuf') {
        entry = { status: 415 }
        rec.error = `unsupported content-type ${rec.contentType}`
      } else {
        try {
          const body = decodeBody(raw, rec.contentEncoding)
          if (record) {
            rec.body = decodeExportTraceServiceRequest(body)
            spans = flattenSpans(rec.body)
            rec.spanCount = spans.length
            if (onSpanId) for (const sp of spans) onSpanId(sp.spanId)
          } else {
            rec.spanCount = countSpans(body, onSpanId)
          }
          counts.spansReceived += rec.spanCount
        } catch (err) {
          entry = { status: 400 }
          rec.error = `undecodable body: ${err.message}`
        }
        if (!entry) {
          const next = script.length ? script.shift() : fallback
          entry = normaliseEntry(typeof next === 'function' ? next(rec) : next)
        }
      }
      rec.answer = entry.action ?? entry.status
      if (record) requests.push(rec)
      if (entry.status >= 200 && entry.status < 300) {
        counts.spansAccepted += rec.spanCount
        if (record) accepted.push(...spans)
      }
      onRequest?.(rec)

      const answer = () => {
        if (entry.action === 'hang') return // left open until stop()
        if (entry.action === 'close') {
          req.socket.destroy()
          return
        }
        const headers = { 'content-type': 'application/x-protobuf', ...(entry.headers ?? {}) }
        // An empty ExportTraceServiceResponse (no partial_success) is a zero-length body.
        const body = entry.body ?? (entry.status >= 200 && entry.status < 300 ? Buffer.alloc(0) : `status ${entry.status}`)
        if (typeof entry.body === 'undefined' && !(entry.status >= 200 && entry.status < 300)) headers['content-type'] = 'text/plain'
        res.writeHead(entry.status, headers)
        res.end(body)
      }
      if (entry.until) Promise.resolve(entry.until).then(answer, answer)
      else if (entry.delayMs) setTimeout(answer, entry.delayMs)
      else answer()
      notify()
    })
  })
  server.keepAliveTimeout = 30_000
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, resolve)
  })
  const addr = server.address()
  const url = `http://${host}:${addr.port}`

  function waitFor(pred, timeoutMs, what) {
    if (pred()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const check = () => {
        if (pred()) {
          clearTimeout(timer)
          waiters.delete(check)
          resolve()
        }
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`receiver: ${what()} within ${timeoutMs} ms`))
      }, timeoutMs)
      waiters.add(check)
    })
  }

  return {
    url,
    endpoint: `${url}${path}`,
    port: addr.port,
    script,
    requests,
    counts,
    /** Spans of accepted (2xx) requests, flattened, in arrival order. */
    get spans() {
      return accepted
    },
    /** Spans of every decoded request, whatever the answer. */
    get allSpans() {
      return requests.flatMap((r) => (r.body ? flattenSpans(r.body) : []))
    },
    /** Resolves with the accepted spans once there are at least n. */
    async waitForSpans(n, timeoutMs = 10_000) {
      await waitFor(
        () => counts.spansAccepted >= n,
        timeoutMs,
        () => `${counts.spansAccepted} spans accepted (of ${counts.spansReceived} received in ${counts.requests} requests), expected ${n}`,
      )
      return accepted
    },
    /** Resolves with the request records once at least n requests arrived. */
    async waitForRequests(n, timeoutMs = 10_000) {
      await waitFor(() => counts.requests >= n, timeoutMs, () => `${counts.requests} requests, expected ${n}`)
      return requests
    },
    /** Forgets everything received so far (the script is left as it is). */
    reset() {
      requests.length = 0
      accepted.length = 0
      counts.requests = 0
      counts.spansReceived = 0
      counts.spansAccepted = 0
      counts.bytes = 0
    },
    async stop() {
      if (stopped) return
      stopped = true
      for (const s of sockets) s.destroy()
      await new Promise((resolve) => server.close(() => resolve()))
    },
  }
}
