// Replaces every native callback function of a TracingPlugin, to time its
// JavaScript side alone: each stub runs `cross()` (nothing by default, or a
// minimal native call) and answers what the plugin expects back (tracerFinish
// an open count, tracerBeforeModel that the history slot was applied).
export function stubNativeCalls(plugin, cross = () => {}) {
  const answers = { tracerFinish: 0, tracerBeforeModel: true }
  plugin._n = Object.fromEntries(
    Object.keys(plugin._n).map((f) => [
      f,
      () => {
        cross()
        return answers[f]
      },
    ]),
  )
  return plugin
}
