#!/bin/sh
# Builds the real llama-server the tests verify (test/real/), from the llama.cpp source that the npm
# package node-llama-cpp ships as a git bundle (llama/gitRelease.bundle), and caches it outside the
# work tree by llama.cpp commit, so a machine builds it once (about 10 minutes on 2 cores).
#   sh scripts/real/llama-server.sh          build when missing, then print the binary's path
#   sh scripts/real/llama-server.sh --path   print the path the cache would hold (build nothing)
# Nothing is downloaded but the npm package: the web UI's prebuilt download, curl and OpenSSL are off,
# and so are examples and tests. Needs cmake, a C++ compiler, git and npm.
# ARMPROOF_CACHE overrides the cache root (default: $XDG_CACHE_HOME or ~/.cache, then armproof/).
set -eu

PKG=node-llama-cpp@3.22.1
# The commit its bundle holds (tag v0.5.0 of node-llama-cpp's release); checked after the unpack.
COMMIT=de3ff81
root="${ARMPROOF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/armproof}/llama.cpp"
out="$root/$COMMIT"
bin="$out/llama-server"

say() { printf 'llama-server: %s\n' "$*" >&2; }
die() { printf 'llama-server: %s\n' "$*" >&2; exit 1; }

if [ "${1:-}" = "--path" ]; then echo "$bin"; exit 0; fi
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then echo "$bin"; exit 0; fi

for tool in cmake c++ git npm tar; do
  command -v "$tool" >/dev/null 2>&1 || die "needs $tool (Debian: apt-get install cmake g++ git; npm comes with Node)"
done

work="$root/build-$$"
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT INT TERM
say "fetching $PKG from the npm registry (its llama/gitRelease.bundle is llama.cpp's source)"
(cd "$work" && npm pack --silent "$PKG" >/dev/null) || die "npm pack $PKG failed"
tar -xzf "$work"/node-llama-cpp-*.tgz -C "$work" package/llama/gitRelease.bundle
git clone --quiet "$work/package/llama/gitRelease.bundle" "$work/src" 2>/dev/null || die "git clone of the bundle failed"
got=$(git -C "$work/src" rev-parse --short=7 HEAD)
[ "$got" = "$COMMIT" ] || die "the bundle of $PKG holds llama.cpp $got, not $COMMIT: update COMMIT in this script and the corpus under fixtures/real/llama.cpp/"

jobs=$(nproc 2>/dev/null || echo 2)
say "building llama.cpp $COMMIT's llama-server with $jobs jobs (about 10 minutes on 2 cores; printed every 15 s)"
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF >"$work/configure.log" 2>&1 \
  || { tail -n 30 "$work/configure.log" >&2; die "cmake configure failed (log above)"; }
cmake --build "$work/build" --target llama-server -j "$jobs" >"$work/build.log" 2>&1 &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
  sleep 15
  kill -0 "$pid" 2>/dev/null && say "still building: $(grep -o '^\[ *[0-9]*%\]' "$work/build.log" | tail -n 1)"
done
wait "$pid" || { tail -n 30 "$work/build.log" >&2; die "cmake --build failed (log above)"; }
mkdir -p "$out"
cp "$work/build/bin/llama-server" "$bin.tmp" && mv "$bin.tmp" "$bin"
say "built $("$bin" --version 2>&1 | grep '^version:')"
echo "$bin"
