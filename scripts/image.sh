#!/usr/bin/env bash
# Builds the armproof image from the Containerfile with podman (buildah underneath) and proves it
# runs: --version and its OCI labels, `armproof demo` green, a live `armproof verify` of a
# reference engine started inside the container, its report written to a host folder mounted
# with `:U` (and refused without it: the folder is root's, the container's user is uid 10001),
# SIGTERM ending a run with 143, and `armproof serve` answering /healthz.
#
# The base: BASE_IMAGE when set; else the Containerfile's default (node:24-slim pinned by digest)
# when a registry answers; else a stand-in made here from Debian's own packages (debootstrap
# bookworm, minbase, with ca-certificates and openssh-client) plus this machine's Node and pnpm
# (the ones bootstrap.sh installed from the npm registry), imported as
# localhost/armproof-base:bookworm-node<version> and kept for the next run.
#
# Exit 0: built and every check passed · 1: a check failed · 77: this machine cannot build or run
# images (no podman, podman refuses to run here, no registry and no debootstrap); one line says why.
set -euo pipefail
cd "$(dirname "$0")/.."

SKIP=77
say() { printf 'image: %s\n' "$*"; }
skip() { say "SKIPPED: $*"; exit "$SKIP"; }
fail() { say "FAILED: $*"; exit 1; }

command -v podman >/dev/null 2>&1 || skip "podman is not installed (Debian: apt-get install podman buildah)"
if ! info=$(timeout 60 podman info --format '{{.Host.OCIRuntime.Name}} {{.Store.GraphDriverName}} rootless={{.Host.Security.Rootless}}' 2>&1); then
  skip "podman cannot run on this machine: $(printf '%s' "$info" | tail -n1)"
fi
if [ "$(id -u)" != 0 ] && ! unshare --user --map-root-user true 2>/dev/null; then
  skip "rootless podman needs user namespaces, and this machine does not allow them (unshare --user failed)"
fi
say "podman $(podman --version | awk '{print $3}') ($info)"

version=$(node -p 'require("./package.json").version')
tag="localhost/armproof:$version-test"
work=$(mktemp -d)
global=()
names=(armproof-image-sigterm armproof-image-serve)
remove() {
  for n in "${names[@]}"; do
    podman "${global[@]}" rm --force --ignore --time 0 "$n" >/dev/null 2>&1 || podman rm --storage "$n" >/dev/null 2>&1 || true
  done
}
cleanup() {
  remove
  rm -rf "$work"
}
trap cleanup EXIT

base_default=$(sed -n 's/^ARG BASE_IMAGE=//p' Containerfile)
base="${BASE_IMAGE:-}"
if [ -z "$base" ]; then
  if timeout 90 podman pull --quiet "$base_default" >/dev/null 2>&1; then
    base=$base_default
    say "base $base (pulled)"
  else
    node_version=$(node -p process.versions.node)
    base="localhost/armproof-base:bookworm-node$node_version"
    if podman image exists "$base"; then
      say "no registry answers; base $base (built here before, from Debian's packages)"
    else
      command -v debootstrap >/dev/null 2>&1 || skip "no registry answers for $base_default, and debootstrap is not installed to make a base from Debian's packages (apt-get install debootstrap)"
      node_bin=$(readlink -f "$(command -v node)")
      pnpm_bin=$(readlink -f "$(command -v pnpm 2>/dev/null || true)" 2>/dev/null || true)
      node bin/node-check.mjs --status >/dev/null 2>&1 || fail "the node on PATH ($node_bin, $(node --version)) is older than armproof needs; run sh bootstrap.sh first"
      [ -n "$pnpm_bin" ] && head -c 4 "$pnpm_bin" | grep -q ELF || fail "the pnpm on PATH is not pnpm's own binary (pnpm 12 is one file); run sh bootstrap.sh first"
      mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
      say "no registry answers for $base_default; making $base from Debian's packages (debootstrap bookworm from $mirror) and Node $node_version"
      rootfs="$work/rootfs"
      timeout 600 debootstrap --variant=minbase --include=ca-certificates,openssh-client bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
        || { tail -n 20 "$work/debootstrap.log"; fail "debootstrap failed (log above)"; }
      install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
      install -m 0755 "$pnpm_bin" "$rootfs/usr/local/bin/pnpm"
      rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
      tar -C "$rootfs" -c . | podman import --quiet \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'CMD ["/bin/sh"]' - "$base" >/dev/null
      rm -rf "$rootfs"
    fi
  fi
fi

# How this machine lets podman start a container: as it is; else with lower rlimits than podman's
# defaults (a sandbox that refuses to raise RLIMIT_NOFILE / RLIMIT_NPROC); else also with runc and
# cgroupfs (crun refuses hybrid cgroup v1/v2 hierarchies). The first that starts one is used.
limits=()
started_with=''
for attempt in plain limits runc; do
  case "$attempt" in
    plain) global=(); limits=() ;;
    limits) global=(); limits=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096) ;;
    runc) command -v runc >/dev/null 2>&1 || continue; global=(--runtime runc --cgroup-manager cgroupfs); limits=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096) ;;
  esac
  if probe=$(timeout 120 podman "${global[@]}" run --rm "${limits[@]}" --network none "$base" /bin/sh -c 'exit 0' 2>&1); then started_with=$attempt; break; fi
done
[ -n "$started_with" ] || skip "podman cannot start a container on this machine: $(printf '%s' "$probe" | tail -n1)$(command -v runc >/dev/null 2>&1 || printf ' (runc is not installed: apt-get install runc may help)')"
[ "$started_with" = plain ] || say "containers start here with: ${global[*]} ${limits[*]}"
pm() { podman "${global[@]}" "$@"; }
# What a run of this script that was itself killed may have left.
remove
prun() { pm run "${limits[@]}" "$@"; }

# This machine's CA certificates, for the build's downloads only (a proxy that intercepts TLS
# signs with a CA the base does not know): mounted into the build, named by a build argument of
# stage 1 only, so they never reach the image.
ca=()
if [ -r /etc/ssl/certs/ca-certificates.crt ]; then
  ca=(--volume /etc/ssl/certs/ca-certificates.crt:/run/armproof-build-ca.crt:ro --build-arg NODE_EXTRA_CA_CERTS=/run/armproof-build-ca.crt)
fi

say "building $tag on $base"
started=$(date +%s)
pm build --quiet --force-rm "${limits[@]}" "${ca[@]}" --network host --build-arg "BASE_IMAGE=$base" --build-arg "VERSION=$version" \
  -t "$tag" -f Containerfile . >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; fail "podman build failed (log above)"; }
say "built in $(( $(date +%s) - started ))s, $(podman image inspect --format '{{.Size}}' "$tag" | awk '{printf "%d MB", $1/1000000}')"

# 1. The entrypoint, the version and the labels.
out=$(prun --rm "$tag" --version)
[ "$out" = "armproof $version" ] || fail "armproof --version printed '$out', expected 'armproof $version'"
label=$(podman image inspect --format '{{index .Labels "org.opencontainers.image.version"}}' "$tag")
[ "$label" = "$version" ] || fail "label org.opencontainers.image.version is '$label', expected '$version'"
user=$(podman image inspect --format '{{.Config.User}}' "$tag")
[ "$user" = "10001:10001" ] || fail "the image runs as '$user', expected 10001:10001"
say "ok: $out, labels, user $user"

# 2. The demo: a reference engine on the container's loopback, PREFILL_INTERLEAVE armed, verified.
prun --rm --network none "$tag" demo >"$work/demo.log" 2>&1 || { tail -n 30 "$work/demo.log"; fail "armproof demo exited $? in the image"; }
grep -q '^GREEN · PREFILL_INTERLEAVE=1 proven on demo' "$work/demo.log" || { tail -n 30 "$work/demo.log"; fail "armproof demo did not end GREEN"; }
say "ok: armproof demo GREEN"

# 3. A live verify, its report on a host folder: refused without :U (root's folder), written with it.
reports="$work/reports"
mkdir -m 0755 "$reports"
live='set -e
node /opt/armproof/dist/engine/launch.js --svc live-7 --process radiance-live --port 18555 -- --prefill-interleave 1 >/tmp/engine.log 2>&1 &
for i in $(seq 1 100); do grep -q "^ready:" /tmp/engine.log && break; sleep 0.2; done
PATH="$(sed -n "s/^  shims    : export PATH=\([^:]*\):.*/\1/p" /tmp/engine.log):$PATH"
exec armproof verify --svc live-7 --knob PREFILL_INTERLEAVE --value 1 --previous 0 --base-url http://127.0.0.1:18555 \
  --host local --process radiance-live --health-budget 60s --meter-window 30s --report reports/live-7.json --junit reports/live-7.xml'
set +e
prun --rm --network none -v "$reports:/runs/reports" --entrypoint /bin/sh "$tag" -c "$live" >"$work/no-u.log" 2>&1
code=$?
set -e
[ "$code" = 2 ] && grep -q 'permission denied' "$work/no-u.log" || { cat "$work/no-u.log"; fail "without :U the report folder should be refused (exit 2, permission denied); got exit $code"; }
prun --rm --network none -v "$reports:/runs/reports:U" --entrypoint /bin/sh "$tag" -c "$live" >"$work/live.log" 2>&1 \
  || { tail -n 30 "$work/live.log"; fail "the live verify exited $? in the image"; }
verdict=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).verdict' "$reports/live-7.json")
[ "$verdict" = green ] || fail "the live verify's report says $verdict"
say "ok: live verify GREEN, report written through -v …:/runs/reports:U (and refused without :U: exit 2, permission denied)"

# 4. SIGTERM (a CI cancel, a pod eviction) ends a run with 143 and its partial report.
# Nothing listens on port 9, so the health step waits out its budget. The host is one reached over
# ssh (a name that is not the URL's): first contact's check of a port nothing on the host serves
# applies only where the URL names the host inspected, and would otherwise end the run at once.
prun -d --name armproof-image-sigterm --network none "$tag" verify --svc gone --knob PREFILL_INTERLEAVE \
  --base-url http://127.0.0.1:9 --host deploy@gpu-7.invalid --no-dropin-check --health-budget 5m >/dev/null
# Signalled only once the run is in its health step (its interrupt handling is bound by then): a
# signal before it, on a loaded machine where the container starts slowly, would end Node itself.
reached=
for i in $(seq 1 150); do pm logs armproof-image-sigterm 2>&1 | grep -q 'health' && { reached=1; break; }; sleep 0.2; done
[ -n "$reached" ] || { pm logs armproof-image-sigterm 2>&1 | tail -n 20; fail "the run did not reach its health step within 30 s (expected its progress line 'health …'); nothing was signalled"; }
# A run that ended before the signal (it should not) is said below with its own exit code and log.
pm kill --signal TERM armproof-image-sigterm >/dev/null 2>&1 || true
code=$(timeout 60 podman "${global[@]}" wait armproof-image-sigterm)
[ "$code" = 143 ] || { pm logs armproof-image-sigterm | tail -n 20; fail "SIGTERM ended the run with $code, expected 143"; }
# Its last lines, read again for a moment: the log may trail the exit podman wait reports.
said=
for i in $(seq 1 10); do pm logs armproof-image-sigterm 2>&1 | grep -q 'INTERRUPTED' && { said=1; break; }; sleep 0.2; done
[ -n "$said" ] || { pm logs armproof-image-sigterm 2>&1 | tail -n 20; fail "the run said no INTERRUPTED line (expected 'INTERRUPTED · interrupted by SIGTERM …' after exit 143)"; }
pm rm -f armproof-image-sigterm >/dev/null
say "ok: SIGTERM → exit 143, INTERRUPTED"

# 5. armproof serve in the image answers /healthz (a targets file mounted, the token from env).
serve_port=$((20000 + RANDOM % 20000))
# The target's host is reached over ssh (as in 4.), so the run is judged inconclusive, not refused
# at first contact for a port nothing on this host serves.
printf 'defaults: { knob: PREFILL_INTERLEAVE, host: deploy@gpu-7.invalid, no-dropin-check: true, health-budget: 1s, meter-window: 1s }\ntargets:\n  - { svc: llm-7, base-url: "http://127.0.0.1:9" }\n' >"$work/targets.yaml"
prun -d --name armproof-image-serve --network host -v "$work/targets.yaml:/config/targets.yaml:ro" \
  -e ARMPROOF_SERVE_TOKEN=image-test-token-0123456789 -e VERIFY_NO_DOTENV=1 "$tag" serve --targets /config/targets.yaml --listen "127.0.0.1:$serve_port" >/dev/null
ok=''
for i in $(seq 1 50); do
  if node -e 'fetch("http://127.0.0.1:'"$serve_port"'/healthz").then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))'; then ok=1; break; fi
  sleep 0.2
done
[ -n "$ok" ] || { pm logs armproof-image-serve | tail -n 20; fail "armproof serve in the image did not answer /healthz"; }
code=$(node -e 'fetch("http://127.0.0.1:'"$serve_port"'/verify/llm-7", { method: "POST" }).then((r) => console.log(r.status))')
[ "$code" = 401 ] || fail "POST /verify/llm-7 without the token answered $code, expected 401"
# A run from the installed package (a child armproof verify): nothing listens there, so not green: 412 and its report.
answer=$(node -e 'fetch("http://127.0.0.1:'"$serve_port"'/verify/llm-7", { method: "POST", headers: { Authorization: "Bearer image-test-token-0123456789" } }).then(async (r) => console.log(r.status, (await r.json()).verdict))')
case "$answer" in "412 red"|"412 inconclusive") ;; *) pm logs armproof-image-serve | tail -n 20; fail "POST /verify/llm-7 answered '$answer', expected 412 and a red or inconclusive report" ;; esac
pm stop -t 10 armproof-image-serve >/dev/null
say "ok: armproof serve answers /healthz, 401 without the token, 412 and the run's report ($answer) with it"
say "PASSED: $tag ($(( $(date +%s) - started ))s)"
