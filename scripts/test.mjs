// `npm test`: every check the project has, in order, each streamed as it runs.
// Keeps going after a failure so one run shows everything; exits non-zero if any failed.
import { spawnSync } from 'node:child_process'
import { needsBuild } from './ensure-built.mjs'
import { testFiles } from './test-files.mjs'

const steps = [
  ['rustfmt', 'cargo', ['fmt', '--check']],
  ['clippy', 'cargo', ['clippy', '--all-targets', '--', '-D', 'warnings']],
  ['cargo test', 'cargo', ['test']],
  ['node:test', process.execPath, ['--test', ...testFiles('.')]],
  ['typecheck', process.execPath, ['scripts/typecheck.mjs']],
  ['actionlint', process.execPath, ['scripts/actionlint.mjs']],
]

if (needsBuild()) {
  steps.unshift(['build', 'npm', ['run', 'build']])
}

const failed = []
for (const [label, cmd, args] of steps) {
  console.log(`\n=== ${label}: ${cmd === process.execPath ? 'node' : cmd} ${args.join(' ')}`)
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ADK_NATIVE_PLUGINS_TEST: '1' } })
  if (r.status !== 0) failed.push(label)
}
console.log(failed.length ? `\nFAILED: ${failed.join(', ')}` : '\nall checks passed')
process.exit(failed.length ? 1 : 0)
