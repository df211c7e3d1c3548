// api.md's snippet from an ES module under `--module node16`, where TypeScript
// reads index.d.ts as CommonJS and @google/adk's types as ESM.
import type { BasePlugin } from '@google/adk'
import { ReflectAndRetryToolPlugin, TracingPlugin } from 'adk-native-plugins'

export const plugins: BasePlugin[] = [new ReflectAndRetryToolPlugin(), new TracingPlugin()]
