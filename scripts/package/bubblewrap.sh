#!/usr/bin/env bash
# scripts/package/bubblewrap.sh: prints a directory holding a bwrap executable, for `npm test` on a
# machine that has no bubblewrap installed (pinnedfs/confine's tests need one; CI installs it).
#
# The distribution's own package, fetched with its own client and unpacked into a cache directory
# (PINNEDFS_CI_CACHE, default ~/.cache/pinnedfs-ci), nothing installed on the system and nothing
# that needs root: `apt-get download` (Debian and Ubuntu) and `dpkg-deb -x`. bwrap is one
# executable that links only libraries every such system has (libc, libcap, libselinux). Fails,
# saying why on stderr, where there is no apt-get or the package cannot be fetched.
set -euo pipefail
cache=${PINNEDFS_CI_CACHE:-$HOME/.cache/pinnedfs-ci}
# (No cache directory yet is no copy yet: find fails then, and pipefail must not end the script.)
found=$({ find "$cache" -mindepth 4 -maxdepth 4 -path "$cache/bubblewrap-*/usr/bin/bwrap" 2>/dev/null || true; } | sort -V | tail -n 1)
if [ -n "$found" ] && [ -x "$found" ]; then
  dirname "$found"
  exit 0
fi
for tool in apt-get dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "bubblewrap.sh: no $tool here to fetch bubblewrap with" >&2; exit 1; }
done
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.bubblewrap-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# A fresh machine's first request can fail while its network settles: three tries.
for try in 1 2 3; do
  if (cd "$tmp" && apt-get download -qq bubblewrap 2>"$tmp/err" >/dev/null); then break; fi
  if [ "$try" = 3 ]; then
    echo "bubblewrap.sh: apt-get download bubblewrap failed:" >&2
    grep -v '^W: Download is performed unsandboxed' "$tmp/err" >&2 || true
    exit 1
  fi
  sleep $((try * 3))
done
deb=$(ls "$tmp"/bubblewrap_*.deb)
version=$(dpkg-deb -f "$deb" Version)
dpkg-deb -x "$deb" "$tmp/unpacked"
"$tmp/unpacked/usr/bin/bwrap" --version >/dev/null
dir="$cache/bubblewrap-$version"
# Published by one rename, never over a copy already there: a second run fetching at the same
# time must not remove the directory the first is already running from. The loser keeps the
# winner's (mv -T fails onto a directory that is not empty).
mv -T "$tmp/unpacked" "$dir" 2>/dev/null || [ -d "$dir" ]
echo "$dir/usr/bin"
