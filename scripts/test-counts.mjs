// node:test's closing counts, from TAP (`# pass 3`) or spec (`ℹ pass 3`) output.
// With several runs in one output (npm test runs one), the last run's counts win.
export function testCounts(output) {
  const counts = {}
  for (const m of output.matchAll(/^(?:#|ℹ) (tests|pass|fail|skipped|cancelled|duration_ms) ([\d.]+)$/gm)) counts[m[1]] = Number(m[2])
  return counts
}
