// Raw JavaScript-side costs that decide how a model call's history should
// cross into Rust: one JSON.stringify of the whole `contents`, a safe
// (replacer) stringify, per-Content stringify, a WeakMap cache of per-Content
// JSON when only the newest Content is new, and the UTF-8 copy a string
// costs when it crosses napi (Buffer.from as a stand-in).
//
//   node --expose-gc bench/history_crossing.bench.mjs     (or: npm run bench -- history_crossing)
import { buildHistory, turn } from './helpers/history.mjs';

function timeIt(fn, minMs = 150) {
  for (let i = 0; i < 3; i++) fn(i); // warm up
  globalThis.gc?.();
  let n = 0;
  const t0 = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < minMs * 1e6) {
    fn(n++);
    elapsed = Number(process.hrtime.bigint() - t0);
  }
  return elapsed / n / 1e6; // ms per op
}

function safeStringify(value) {
  const seen = new WeakSet();
  return JSON.stringify(value, (_k, v) => {
    if (typeof v === 'bigint') return v.toString();
    if (v !== null && typeof v === 'object') {
      if (seen.has(v)) return '[Circular]';
      seen.add(v);
    }
    return v;
  });
}

const fmt = (x) => (x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3)).padStart(8);
const rows = [];
for (const [label, bytes] of [['10 KB', 10e3], ['100 KB', 100e3], ['1 MB', 1e6]]) {
  const contents = buildHistory(bytes);
  const json = JSON.stringify(contents);
  const r = { label, n: contents.length };
  r.stringify = timeIt(() => JSON.stringify(contents));
  r.safe = timeIt(() => safeStringify(contents));
  r.perContent = timeIt(() => contents.map((c) => JSON.stringify(c)));

  // WeakMap cache, same Content objects every call, one new step (2 Contents) per call.
  const cache = new WeakMap();
  for (const c of contents) cache.set(c, JSON.stringify(c));
  const extra = [];
  for (let i = 0; i < 64; i++) extra.push(...turn(100000 + i));
  const cachedPieces = (i) => {
    const list = contents.concat(extra.slice(0, 2 * ((i % 32) + 1)));
    const out = new Array(list.length);
    for (let k = 0; k < list.length; k++) {
      const c = list[k];
      let s = cache.get(c);
      if (s === undefined) {
        s = JSON.stringify(c);
        cache.set(c, s);
      }
      out[k] = s;
    }
    return out;
  };
  // Fresh pieces each time: the 2 newest are stringified (cache misses on first sight).
  r.cachedPieces = timeIt((i) => {
    for (const c of extra.slice(2 * (i % 32), 2 * ((i % 32) + 1))) cache.delete(c);
    return cachedPieces(i);
  });
  r.cachedJoined = timeIt((i) => {
    for (const c of extra.slice(2 * (i % 32), 2 * ((i % 32) + 1))) cache.delete(c);
    return '[' + cachedPieces(i).join(',') + ']';
  });
  // ADK 2.0.0 reality: every Content is a fresh clone, so an identity cache always misses.
  const clones = Array.from({ length: 4 }, () => structuredClone(contents));
  const missCache = new WeakMap();
  r.freshMiss = timeIt((i) => {
    const list = clones[i % 4];
    const out = new Array(list.length);
    for (let k = 0; k < list.length; k++) {
      let s = missCache.get(list[k]);
      if (s === undefined) {
        s = JSON.stringify(list[k]);
        missCache.set(list[k], s);
      }
      out[k] = s;
    }
    // Forget, so the next round misses again as fresh clones would.
    for (const c of list) missCache.delete(c);
    return out;
  });
  r.utf8 = timeIt(() => Buffer.from(json, 'utf8'));
  r.clone = timeIt(() => structuredClone(contents));
  rows.push(r);
}

console.log(`node ${process.version}; ms per operation (each timed for >= 150 ms)`);
const cols = [
  ['stringify', 'JSON.stringify(contents)'],
  ['safe', 'stringify + seen-set replacer'],
  ['perContent', 'stringify each Content'],
  ['cachedPieces', 'WeakMap cache, 2 new Contents (pieces)'],
  ['cachedJoined', 'WeakMap cache, 2 new, joined to one string'],
  ['freshMiss', 'WeakMap cache, fresh clones (ADK 2.0.0)'],
  ['utf8', 'UTF-8 copy of the JSON (napi string stand-in)'],
  ['clone', "structuredClone (≈ ADK's own cloneDeep cost)"],
];
console.log('operation'.padEnd(48) + rows.map((r) => `${r.label} (${r.n})`.padStart(16)).join(''));
for (const [key, name] of cols) {
  console.log(name.padEnd(48) + rows.map((r) => fmt(r[key]).padStart(16)).join(''));
}
