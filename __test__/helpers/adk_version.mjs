// Which @google/adk the suites run against (test:adk-matrix runs them on 1.x and 2.0.0).
// Tests of what only ADK 2 has (Workflow, node callbacks) pass `needsAdk2` as their options.
import { version } from '@google/adk'

export const adkVersion = version
export const adkMajor = Number(version.split('.')[0])
export const needsAdk2 = { skip: adkMajor < 2 ? `needs @google/adk 2 (running ${version})` : false }
