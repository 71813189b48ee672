#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The release check: runs the README's two Quick start commands on a fresh
# Debian 12 (bookworm) root, the way a new user would on a new machine.
#
#   scripts/clean-room.sh [--keep] [--no-shared] [--only quickstart|test]
#
# It builds a minimal bookworm root with mmdebstrap (variant "apt": essential
# packages and apt, nothing else), from the Debian mirrors this machine's apt
# sources already name (no host name is written here), copies a clean clone of
# this repository's HEAD into it as /work/main (and ../shared/ beside it as
# /work/shared, read-only like CI, unless --no-shared or it is absent), mounts
# /proc, /dev and /sys, and runs inside it with chroot, as root:
#
#   scripts/quickstart.sh
#   scripts/test.sh
#
# It prints one line per command with its exit code and wall time, keeps each
# command's full log in the root's /work/logs/ (the root is removed at the end
# unless --keep; the logs are copied to ${MLCC_CLEAN_ROOM_LOGS:-clean-room-logs}
# first), and exits non-zero if either command fails.
# Needs root (mmdebstrap, mount, chroot); installs mmdebstrap if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"

keep=0
shared=1
only=""
while (($#)); do
  case "$1" in
    --keep) keep=1 ;;
    --no-shared) shared=0 ;;
    --only) only="$2"; shift ;;
    -h|--help) sed -n '3,22p' "$0"; exit 0 ;;
    *) echo "clean-room: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ "$(id -u)" -ne 0 ]; then
  echo "clean-room: needs root (mmdebstrap, mount and chroot)" >&2
  exit 2
fi
if ! command -v mmdebstrap >/dev/null; then
  echo "clean-room: installing mmdebstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
fi

# The Debian mirrors of this machine's apt sources: every deb line or deb822
# stanza whose suite is bookworm, bookworm-updates or bookworm-security, so
# the root gets the same package versions as this machine.
mirrors=()
read_sources() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    while read -r type rest; do
      [ "$type" = deb ] || continue
      rest="$(sed -E 's/\[[^]]*\] *//' <<<"$rest")"
      read -r uri suite _ <<<"$rest"
      if [[ "$suite" =~ ^bookworm(-updates|-security)?$ ]]; then
        mirrors+=("deb $uri $suite main")
      fi
    done <"$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # One stanza per paragraph: URIs and Suites (Components main is assumed).
    while IFS=$'\t' read -r uris suites; do
      local u s
      for u in $uris; do
        for s in $suites; do
          if [[ "$s" =~ ^bookworm(-updates|-security)?$ ]]; then
            mirrors+=("deb $u $s main")
          fi
        done
      done
    done < <(awk 'BEGIN { RS = ""; FS = "\n" }
      { u = ""; s = "";
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/) { u = $i; sub(/^URIs:[ \t]*/, "", u) }
          if ($i ~ /^Suites:/) { s = $i; sub(/^Suites:[ \t]*/, "", s) }
        }
        if (u != "" && s != "") print u "\t" s }' "$f")
  done
}
read_sources
if ((${#mirrors[@]} == 0)); then
  echo "clean-room: no bookworm mirror in /etc/apt/sources.list or /etc/apt/sources.list.d/" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/var/tmp}/mlcc-clean-room.XXXXXX")"
root="$work/root"
logs_out="${MLCC_CLEAN_ROOM_LOGS:-$repo/clean-room-logs}"
mounted=()
cleanup() {
  local i m
  # Mounts the tests made inside the root (ip netns binds /run/netns), deepest first.
  for m in $(awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -R "${mounted[i]}" 2>/dev/null || umount -lR "${mounted[i]}" 2>/dev/null || true
  done
  if [ -d "$root/work/logs" ]; then
    mkdir -p "$logs_out"
    cp -a "$root/work/logs/." "$logs_out/" 2>/dev/null || true
  fi
  if ((keep)); then
    echo "clean-room: kept $root"
  else
    rm -rf --one-file-system "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

t0=$SECONDS
echo "clean-room: mmdebstrap bookworm (variant apt) into $root"
mmdebstrap --quiet --variant=apt bookworm "$root" "${mirrors[@]}" >"$work/mmdebstrap.log" 2>&1 || {
  tail -20 "$work/mmdebstrap.log" >&2
  echo "clean-room: mmdebstrap failed" >&2
  exit 1
}
echo "clean-room: root ready in $((SECONDS - t0)) s"

# A clean clone of HEAD (committed work only), and shared/ beside it.
mkdir -p "$root/work" "$root/work/logs"
git clone --quiet --no-hardlinks "$repo" "$root/work/main"
rm -rf "$root/work/main/.git/hooks"
if ((shared)) && [ -d "$repo/../shared" ]; then
  cp -a "$repo/../shared" "$root/work/shared"
  chmod -R a-w "$root/work/shared"
fi
# This machine's network settings, which every machine of this workplace has and
# a bare bookworm root lacks: name servers, the extra CA certificates its network
# path needs (/usr/local/share/ca-certificates) and npm's user configuration
# (registry, cafile). They are the machine's, not packages the project installs.
cp /etc/resolv.conf "$root/etc/resolv.conf"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" /usr/sbin/update-ca-certificates >/dev/null 2>&1 || true
fi
[ -f "$HOME/.npmrc" ] && cp "$HOME/.npmrc" "$root/root/.npmrc"

for m in proc sys dev; do
  mkdir -p "$root/$m"
done
mount -t proc proc "$root/proc" && mounted+=("$root/proc")
mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys" && mounted+=("$root/sys")
mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" && mounted+=("$root/dev")

status=0
run_in_root() {  # log-name command
  local name="$1" cmd="$2" start rc
  start=$SECONDS
  set +e
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 TERM=dumb /bin/bash -c "cd /work/main && $cmd" >"$root/work/logs/$name.log" 2>&1
  rc=$?
  set -e
  echo "clean-room: $cmd: exit $rc in $((SECONDS - start)) s (log: $logs_out/$name.log)"
  if ((rc != 0)); then
    tail -15 "$root/work/logs/$name.log" | sed 's/^/  | /'
    status=1
  fi
}
[ -z "$only" ] || [ "$only" = quickstart ] && run_in_root quickstart scripts/quickstart.sh
[ -z "$only" ] || [ "$only" = test ] && run_in_root test scripts/test.sh
echo "clean-room: total $((SECONDS - t0)) s, $([ $status -eq 0 ] && echo passed || echo FAILED)"
exit $status
