#!/bin/sh
# Replays the README's two commands as a new user on a bare machine would: a fresh `git clone` of
# this checkout's HEAD into a temp folder, a PATH that holds Node 20 (from the npm registry) and
# npm and none of this machine's own node, pnpm or corepack, and an environment emptied by env -i.
#   sh scripts/bare-machine.sh [demo|test|both]   (default: both; prints the time of each)
# It downloads node@20 once per run (about 30 MB) and, through the bootstrap, Node 24 and pnpm.
set -eu
what=${1:-both}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/armproof-bare-XXXXXX")
echo "bare-machine: working in $work"

npm install --prefix "$work/n20" --no-audit --no-fund --loglevel=error node@20 >/dev/null
npm_cli=$(readlink -f "$(command -v npm)")
mkdir -p "$work/bin"
# Everything a shell user has, less any node, npm, pnpm or corepack of this machine.
for d in /usr/bin /bin; do
  for f in "$d"/*; do
    b=$(basename "$f")
    case "$b" in node|nodejs|npm|npx|pnpm|pnpx|corepack) continue ;; esac
    [ -e "$work/bin/$b" ] || ln -s "$f" "$work/bin/$b"
  done
done
ln -s "$work/n20/node_modules/node/bin/node" "$work/bin/node"
printf '#!/bin/sh\nexec node %s "$@"\n' "$npm_cli" >"$work/bin/npm"
chmod +x "$work/bin/npm"
bare_path="$work/bin:/usr/sbin:/sbin"
# env -i keeps only HOME and PATH, plus this machine's network settings (a CA bundle, a proxy)
# that any user's shell here has too; without them npm cannot reach the registry at all.
keep="HOME=$HOME PATH=$bare_path TERM=dumb"
for v in NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR HTTPS_PROXY https_proxy HTTP_PROXY http_proxy NO_PROXY no_proxy; do
  eval "val=\${$v:-}"
  [ -z "$val" ] || keep="$keep $v=$val"
done
# shellcheck disable=SC2086,SC2016 # $keep: NAME=value words without spaces; the inner $(…) is for the inner sh
env -i $keep sh -c 'echo "bare-machine: node $(node --version), npm $(npm --version), pnpm: $(command -v pnpm || echo none)"'

git clone -q "$repo" "$work/armproof"
cd "$work/armproof"
run() {
  start=$(date +%s)
  set +e
  # shellcheck disable=SC2086
  env -i $keep sh bootstrap.sh "$@"
  code=$?
  set -e
  echo "bare-machine: sh bootstrap.sh $* exited $code after $(( $(date +%s) - start ))s"
  return $code
}
status=0
case "$what" in
  demo) run demo || status=$? ;;
  test) run test || status=$? ;;
  both) run demo || status=$?; run test || status=$? ;;
  *) echo "usage: sh scripts/bare-machine.sh [demo|test|both]" >&2; exit 2 ;;
esac
cd /
rm -rf "$work"
exit $status
