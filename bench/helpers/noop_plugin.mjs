// The benchmarks' plain JavaScript no-op: every callback BasePlugin's own
// (an async function resolving to undefined), nothing recorded.
import { BasePlugin } from '@google/adk'

export class NoopPlugin extends BasePlugin {
  constructor() {
    super('noop')
  }
}
