// V8's gc() for tests that check a value is collected: the flag is set at
// run time (node --test passes no --expose-gc) and the function is taken
// from a fresh context, where V8 installs it once the flag is on.
import v8 from 'node:v8'
import vm from 'node:vm'

export function exposeGc() {
  v8.setFlagsFromString('--expose-gc')
  return vm.runInNewContext('gc')
}
