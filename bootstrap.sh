#!/bin/sh
# From a bare machine to armproof: needs only Node >= 18 with npm (to bootstrap) and a POSIX sh.
#   sh bootstrap.sh demo       the demo (a reference engine on loopback, one knob armed, verified)
#   sh bootstrap.sh test       armproof's own tests (`pnpm test`)
#   sh bootstrap.sh verify …   any package.json script, with its arguments (run straight, not through
#                              `pnpm run`: no ELIFECYCLE line; anything else goes to pnpm)
#   sh bootstrap.sh            install only, then say how to use the same Node and pnpm
# When the node on PATH is older than package.json's engines.node, or pnpm is not the version in
# package.json's packageManager, it installs Node 24 and that pnpm from the npm registry into
# .tools/ in this folder (git ignores it) and puts .tools/node_modules/.bin first on PATH. It says
# so before it happens, installs nothing outside this folder (npm and pnpm keep their usual download
# caches) and never asks for a password. Then `pnpm install --frozen-lockfile`, then the command.
# .ci/run runs `sh bootstrap.sh test` too, so the README and CI cannot drift apart.
set -eu

NODE_PIN=24.21.0
cd "$(dirname "$0")"
here=$(pwd)
tools_bin="$here/.tools/node_modules/.bin"

say() { printf 'bootstrap: %s\n' "$*" >&2; }
die() { printf 'bootstrap: %s\n' "$*" >&2; exit 1; }

pnpm_pin=$(sed -n 's/^ *"packageManager": *"pnpm@\([0-9][0-9.]*\)".*/\1/p' package.json)
[ -n "$pnpm_pin" ] || die 'package.json has no "packageManager": "pnpm@X.Y.Z"'
node_floor=$(sed -n '/"engines"/,/}/s/^ *"node": *"\([^"]*\)".*/\1/p' package.json)

# A previous bootstrap's tools come first; the machine's own are used when they already fit.
if [ -d "$tools_bin" ]; then PATH="$tools_bin:$PATH"; export PATH; fi

node_fits() { command -v node >/dev/null 2>&1 && node bin/node-check.mjs --status >/dev/null 2>&1; }
pnpm_fits() { [ "$(pnpm --version 2>/dev/null || true)" = "$pnpm_pin" ]; }
node_seen() { if command -v node >/dev/null 2>&1; then echo "Node $(node --version 2>/dev/null || echo '(unknown version)') at $(command -v node)"; else echo 'no node on PATH'; fi; }
pnpm_seen() { if command -v pnpm >/dev/null 2>&1; then echo "pnpm $(pnpm --version 2>/dev/null || echo '(unknown version)') at $(command -v pnpm)"; else echo 'no pnpm on PATH'; fi; }

wanted=''
if ! node_fits; then
  say "armproof needs Node $node_floor; found $(node_seen)."
  wanted=" node@$NODE_PIN"
fi
if ! pnpm_fits; then
  say "armproof needs pnpm $pnpm_pin; found $(pnpm_seen)."
  wanted="$wanted pnpm@$pnpm_pin"
fi

if [ -n "$wanted" ]; then
  command -v npm >/dev/null 2>&1 || die "installing$wanted needs npm (it comes with Node >= 18); install Node 24 LTS with npm, or put npm on PATH, then run this again"
  say "installing$wanted from the npm registry into $here/.tools (ignored by git; no sudo, nothing outside this folder but npm's and pnpm's download caches)."
  mkdir -p .tools
  # shellcheck disable=SC2086 # $wanted is one or two package@version words
  if ! npm install --prefix "$here/.tools" --no-audit --no-fund --loglevel=error $wanted >&2; then
    die "npm install --prefix .tools$wanted failed (see above); nothing else was changed"
  fi
  PATH="$tools_bin:$PATH"
  export PATH
  hash -r 2>/dev/null || true
  node_fits || die "after installing, $(node_seen) still does not satisfy $node_floor"
  pnpm_fits || die "after installing, $(pnpm_seen) is still not $pnpm_pin"
fi
say "using $(node_seen), $(pnpm_seen)."

# pnpm would otherwise ask before it replaces a node_modules made by another pnpm; no prompt, ever.
pnpm install --frozen-lockfile --config.confirmModulesPurge=false >&2

if [ "$#" -eq 0 ]; then
  case ":$PATH:" in
    *":$tools_bin:"*) say "ready. To run pnpm commands with the same tools in this shell: export PATH=\"$tools_bin:\$PATH\"" ;;
    *) say 'ready: pnpm demo, pnpm test, pnpm verify --help' ;;
  esac
  exit 0
fi
# A package script runs as pnpm would run it (node_modules/.bin on PATH, the arguments appended to
# its last command), but straight: pnpm 12 ends every failing `pnpm <script>` with its own
# `[ELIFECYCLE] Command failed with exit code N.` line, and no setting of it removes that (not
# --silent, --reporter=silent, --loglevel=silent, nor shell-emulator); the exit code is the
# script's own. ARMPROOF_LAUNCHER tells that script's messages to name `sh bootstrap.sh <command>`.
script=$(node -e 'const s = require("./package.json").scripts || {}; if (Object.hasOwn(s, process.argv[1])) process.stdout.write(s[process.argv[1]])' "$1")
if [ -n "$script" ]; then
  name=$1
  shift
  PATH="$here/node_modules/.bin:$PATH" ARMPROOF_LAUNCHER="bootstrap:$name" exec sh -c "$script \"\$@\"" "$name" "$@"
fi
exec pnpm "$@"
