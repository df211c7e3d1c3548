// Realistic ADK conversation histories for benchmarks: `contents` arrays of
// @google/genai Content objects as ADK puts them in an LlmRequest — user
// text, model function calls, user function responses carrying tool results,
// model text — sized by their JSON length (10 KB, 100 KB, 1 MB, ...).
//
// Deterministic (seeded), so every run and every plugin sees the same data.

const WORDS = (
  'the a of to and in is for on that with as by this from at be are or it an which ' +
  'order customer invoice shipment warehouse delivery status pending refund account ' +
  'weather forecast temperature humidity wind city region report summary analysis ' +
  'query result record table column value metric latency error retry request response ' +
  'agent model tool function call argument schema document section paragraph source'
).split(' ');

/** A small seeded PRNG (mulberry32). */
export function rng(seed = 1) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sentence(rand, words) {
  const out = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(rand() * WORDS.length)]);
  out[0] = out[0][0].toUpperCase() + out[0].slice(1);
  return out.join(' ') + '.';
}

function paragraph(rand, sentences) {
  const out = [];
  for (let i = 0; i < sentences; i++) out.push(sentence(rand, 6 + Math.floor(rand() * 14)));
  return out.join(' ');
}

const TOOLS = ['search_documents', 'get_order', 'lookup_customer', 'get_weather', 'run_query'];

/** ADK-style function call id (`adk-<uuid>`), deterministic. */
function callId(rand) {
  const hex = () => Math.floor(rand() * 0x10000).toString(16).padStart(4, '0');
  return `adk-${hex()}${hex()}-${hex()}-${hex()}-${hex()}-${hex()}${hex()}${hex()}`;
}

/** The tool result a function response carries: nested objects, arrays, numbers, text. */
function toolResult(rand, tool, i) {
  switch (tool) {
    case 'search_documents':
      return {
        status: 'success',
        total: 3,
        results: [0, 1, 2].map((k) => ({
          id: `doc-${i}-${k}`,
          title: sentence(rand, 5),
          score: Math.round(rand() * 1000) / 1000,
          snippet: paragraph(rand, 3),
          metadata: { source: 'kb', updated: '2025-06-0' + (1 + (k % 9)), tags: ['faq', 'policy'] },
        })),
      };
    case 'get_order':
      return {
        order_id: `ORD-${100000 + i}`,
        status: 'shipped',
        items: [0, 1, 2, 3].map((k) => ({ sku: `SKU-${i}-${k}`, qty: 1 + k, price: 9.99 + k, name: sentence(rand, 4) })),
        shipping: { carrier: 'UPS', tracking: `1Z${i}X${Math.floor(rand() * 1e9)}`, eta: '2025-07-01' },
        notes: paragraph(rand, 2),
      };
    case 'lookup_customer':
      return {
        customer: { id: `C${i}`, name: 'Ada Lovelace', tier: 'gold', since: 2019, email: 'ada@example.com' },
        recent_tickets: [0, 1].map((k) => ({ id: `T-${i}-${k}`, subject: sentence(rand, 6), body: paragraph(rand, 2) })),
      };
    case 'get_weather':
      return {
        city: 'Paris',
        current: { temp_c: 21.5, humidity: 0.62, wind_kph: 14 },
        forecast: [0, 1, 2, 3, 4].map((d) => ({ day: d, high: 20 + d, low: 12 + d, summary: sentence(rand, 8) })),
      };
    default:
      return {
        columns: ['id', 'region', 'revenue', 'orders', 'comment'],
        rows: Array.from({ length: 12 }, (_, r) => [r, `region-${r % 4}`, Math.round(rand() * 1e6) / 100, Math.floor(rand() * 500), sentence(rand, 7)]),
        truncated: false,
      };
  }
}

/**
 * One agent step as ADK records it: the model calls a tool and the tool's
 * response comes back as a user Content; every few steps the user speaks
 * and the model answers in text. Returns 2 Contents.
 */
export function turn(i, rand = rng(i + 1)) {
  if (i % 5 === 4) {
    return [
      { role: 'user', parts: [{ text: paragraph(rand, 2) }] },
      { role: 'model', parts: [{ text: paragraph(rand, 4) }] },
    ];
  }
  const tool = TOOLS[i % TOOLS.length];
  const id = callId(rand);
  const args = { query: sentence(rand, 6), limit: 3 + (i % 5), filters: { region: 'eu', after: '2025-01-01' } };
  return [
    { role: 'model', parts: [{ functionCall: { id, name: tool, args } }] },
    { role: 'user', parts: [{ functionResponse: { id, name: tool, response: toolResult(rand, tool, i) } }] },
  ];
}

/** The user message that opens a conversation. */
export function opening(rand = rng(0)) {
  return { role: 'user', parts: [{ text: 'Please help me with this: ' + paragraph(rand, 3) }] };
}

/**
 * A `contents` array whose JSON.stringify length is about `targetBytes`
 * (never less): an opening user message, then turns until the size is met.
 */
export function buildHistory(targetBytes) {
  const contents = [opening()];
  let size = JSON.stringify(contents).length;
  for (let i = 0; size < targetBytes; i++) {
    for (const c of turn(i)) {
      contents.push(c);
      size += JSON.stringify(c).length + 1;
    }
  }
  return contents;
}

/** `n` independent deep copies (fresh objects, as ADK 2.0.0 builds per call). */
export function copies(contents, n) {
  return Array.from({ length: n }, () => structuredClone(contents));
}

/** Tool declarations and a system instruction, as an LlmAgent's request carries them. */
export function requestConfig() {
  return {
    systemInstruction: {
      role: 'system',
      parts: [{ text: 'You are a helpful support agent. ' + paragraph(rng(99), 6) }],
    },
    temperature: 0.2,
    topP: 0.95,
    maxOutputTokens: 2048,
    tools: [
      {
        functionDeclarations: TOOLS.map((name) => ({
          name,
          description: `Calls ${name.replace('_', ' ')} and returns structured results.`,
          parameters: {
            type: 'OBJECT',
            properties: {
              query: { type: 'STRING', description: 'What to look for.' },
              limit: { type: 'INTEGER', description: 'At most this many results.' },
              filters: { type: 'OBJECT', properties: { region: { type: 'STRING' }, after: { type: 'STRING' } } },
            },
            required: ['query'],
          },
        })),
      },
    ],
  };
}

/** An LlmRequest-like object over `contents`. */
export function llmRequest(contents, model = 'gemini-2.5-flash') {
  return { model, contents, config: requestConfig(), liveConnectConfig: {}, toolsDict: {} };
}

/** A realistic final LlmResponse with usage (text answer, or a tool call when `toolCall`). */
export function llmResponse(i = 0, { toolCall = false, promptTokens = 1000 } = {}) {
  const rand = rng(1000 + i);
  const content = toolCall
    ? turn(i * 5, rand)[0]
    : { role: 'model', parts: [{ text: paragraph(rand, 4) }] };
  return {
    content,
    finishReason: 'STOP',
    turnComplete: true,
    usageMetadata: {
      promptTokenCount: promptTokens,
      candidatesTokenCount: 87,
      totalTokenCount: promptTokens + 87,
      thoughtsTokenCount: 12,
    },
  };
}
