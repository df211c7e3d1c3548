// The Linux targets `npm run build:cross` builds, and what each binary must look like.
// One table so the builder, the ELF check and the qemu runner agree on names.

// Oldest glibc the gnu binaries claim: the floor napi-rs itself ships on (and the first
// glibc with aarch64 at all). zig links against exactly this version's symbol set.
export const GLIBC_FLOOR = '2.17'

export const CROSS_TARGETS = [
  { triple: 'x86_64-unknown-linux-gnu', platform: 'linux-x64-gnu', arch: 'x64', libc: 'gnu' },
  { triple: 'aarch64-unknown-linux-gnu', platform: 'linux-arm64-gnu', arch: 'arm64', libc: 'gnu' },
  { triple: 'x86_64-unknown-linux-musl', platform: 'linux-x64-musl', arch: 'x64', libc: 'musl' },
  { triple: 'aarch64-unknown-linux-musl', platform: 'linux-arm64-musl', arch: 'arm64', libc: 'musl' },
]

export const BINARY_NAME = 'adk-native-plugins'

export const nodeFileFor = (t) => `${BINARY_NAME}.${t.platform}.node`

// zigbuild reads the glibc to link against from a suffix on the triple.
export const zigTargetFor = (t) => (t.libc === 'gnu' ? `${t.triple}.${GLIBC_FLOOR}` : t.triple)

export function findTarget(name) {
  return CROSS_TARGETS.find((t) => t.triple === name || t.platform === name)
}
