// Must NOT compile: a plugin missing a callback is not a BasePlugin.
import { BasePlugin } from '@google/adk'

class Incomplete {
  readonly name = 'incomplete'
  async beforeRunCallback(): Promise<undefined> {
    return undefined
  }
}
export const plugins: BasePlugin[] = [new Incomplete()]
