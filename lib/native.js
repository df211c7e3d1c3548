'use strict'
// The native addon. binding.js is napi-rs's generated loader (rewritten by every
// `napi build`, so it is never edited by hand); this module loads it and, when no
// binary fits this machine, replaces napi's generic "Cannot find native binding"
// with a message that names what was detected, which platforms ship a prebuilt
// binary, and how to build one from source. napi's error, with the chain of
// individual load failures under it, stays reachable as `cause`.
const pkg = require('../package.json')

function load() {
  try {
    return require('../binding.js')
  } catch (err) {
    throw noBinaryError(err)
  }
}

/** napi's platform-arch-abi name for a target triple, as `napi create-npm-dirs` names the folders. */
function platformOfTriple(triple) {
  const [archPart, ...rest] = triple.split('-')
  const arch = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' }[archPart] ?? archPart
  const sys = rest.join('-')
  if (sys.includes('darwin')) return `darwin-${arch}`
  if (sys.includes('windows')) return `win32-${arch}-msvc`
  if (sys.includes('linux')) return `linux-${arch}-${sys.endsWith('musl') ? 'musl' : 'gnu'}`
  return `${sys}-${arch}`
}

/** 'glibc 2.36', 'musl', or null off Linux; read from the process report as napi's loader does. */
function detectLibc() {
  if (process.platform !== 'linux') return null
  try {
    const header = process.report?.getReport?.()?.header
    return header?.glibcVersionRuntime ? `glibc ${header.glibcVersionRuntime}` : 'musl'
  } catch {
    return 'unknown libc'
  }
}

/** This machine's platform-arch-abi name, or null where napi names none. */
function hostPlatform(libc) {
  const { platform, arch } = process
  if (platform === 'linux') return `linux-${arch}-${libc === 'musl' ? 'musl' : 'gnu'}`
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

function noBinaryError(cause) {
  const libc = detectLibc()
  const host = hostPlatform(libc)
  const published = (pkg.napi?.targets ?? []).map(platformOfTriple)
  const detected = `${process.platform}/${process.arch}${libc ? ` (${libc})` : ''}`
  const repo = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url
  const lines = [`${pkg.name}: no native binary could be loaded for ${detected}.`]
  if (process.env.NAPI_RS_NATIVE_LIBRARY_PATH) {
    lines.push(`NAPI_RS_NATIVE_LIBRARY_PATH is set to ${process.env.NAPI_RS_NATIVE_LIBRARY_PATH}, which could not be loaded.`)
  } else if (published.includes(host)) {
    lines.push(
      `A prebuilt binary for ${host} is published as ${pkg.name}-${host}@${pkg.version}, but it is not installed or did not load.`,
      'Reinstall without --omit=optional / --no-optional; if a lockfile from another platform is in use, remove node_modules and package-lock.json and install again (npm/cli#4828).',
    )
  } else {
    lines.push(`No prebuilt binary is published for ${host}.`)
  }
  lines.push(
    `Prebuilt binaries are published for: ${published.join(', ')}.`,
    `To build from source (needs Rust and a C compiler), in a clone of ${repo || `the ${pkg.name} repository`} run: npm ci && npm run build` +
      ' — then install that folder.',
  )
  const firstFailure = failures(cause).find((e) => e.code !== 'MODULE_NOT_FOUND')
  if (firstFailure) lines.push(`First load failure: ${firstFailure.message.split('\n')[0]}`)
  const error = new Error(lines.join('\n'), { cause })
  error.code = 'ADK_NATIVE_PLUGINS_NO_BINARY'
  return error
}

/** The individual load failures napi chained under its error (each one's cause is the previous). */
function failures(err) {
  const out = []
  for (let e = err?.cause; e && out.length < 32; e = e.cause) out.push(e)
  return out
}

module.exports = load()
