// Margins for the tests' upper bounds on elapsed time. A bound is what the
// product promises (a timeout, a backoff) plus a margin for the machine: the
// margin, and only it, is multiplied by TIME_FACTOR.
//
// TIME_FACTOR is ADK_TEST_TIME_FACTOR when set (e.g. 4 under qemu emulation);
// otherwise how loaded this machine is now: the 1-minute load average per CPU,
// at least 1 (an idle CI runner) and at most 8. Windows reports no load
// average (0): 1 there.
import { availableParallelism, cpus, loadavg } from 'node:os'

function factor() {
  const fromEnv = Number(process.env.ADK_TEST_TIME_FACTOR)
  if (Number.isFinite(fromEnv) && fromEnv > 0) return fromEnv
  const n = typeof availableParallelism === 'function' ? availableParallelism() : cpus().length
  const perCpu = loadavg()[0] / Math.max(1, n)
  return Math.min(8, Math.max(1, perCpu))
}

export const TIME_FACTOR = factor()

/** `ms` of margin, scaled for this machine. */
export const margin = (ms) => Math.round(ms * TIME_FACTOR)
