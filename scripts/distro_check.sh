#!/usr/bin/env bash
# attnscope on another distribution (issue 25). CI and the README's commands stay on Debian 12; this
# checks, on a Debian host, that the other distributions setup.sh knows can install and build it.
#
#   scripts/distro_check.sh --index [DIST...]
#       Every package scripts/setup.sh installs on DIST (its --list-packages for DIST's os-release)
#       exists in DIST's package index (Packages.xz from the archive; a name only provided by
#       another package counts as missing, since apt-get install refuses virtual names with several
#       providers). Default: trixie noble bookworm.
#   scripts/distro_check.sh [DIST]
#       As root: debootstrap a minimal DIST (default trixie) into $ATTNSCOPE_CHROOT
#       (default /var/tmp/attnscope-chroot-DIST; kept, so a second run is incremental), copy in a
#       clean `git archive HEAD` (uncommitted files stay out) plus the gitignored test data, run
#       `scripts/setup.sh --packages-only` inside, configure and build the app (and with
#       ATTNSCOPE_DISTRO_TESTS=1 the unit tests, run with ctest -L unit), then run it inside:
#       `attnscope models`, `export` and `render` on the built-in lesson model, and a screenshot
#       under Xvfb.
#       ATTNSCOPE_DISTRO_BUILD=0 stops after the packages (apt resolves the whole list there).
#       Prints a summary; exits non-zero when a step failed. Installs debootstrap on the host when
#       it is missing. Builds niced on $ATTNSCOPE_DISTRO_JOBS cores (default 2).
# DIST: trixie (Debian 13), noble (Ubuntu 24.04), bookworm (Debian 12, as CI).
set -euo pipefail
cd "$(dirname "$0")/.."

dist_archive() {  # DIST -> "mirror suite components..."
  case "$1" in
    bookworm | trixie) echo "http://deb.debian.org/debian $1 main" ;;
    noble) echo "http://archive.ubuntu.com/ubuntu $1 main universe" ;;
    *) echo "distro_check: unknown distribution '$1' (trixie, noble or bookworm)" >&2 && return 1 ;;
  esac
}
dist_os_release() {  # DIST -> the os-release lines setup.sh reads
  case "$1" in
    bookworm) printf 'ID=debian\nVERSION_ID="12"\n' ;;
    trixie) printf 'ID=debian\nVERSION_ID="13"\n' ;;
    noble) printf 'ID=ubuntu\nVERSION_ID="24.04"\n' ;;
  esac
}

# ---- --index: the package lists against the archives' indexes --------------------------------
if [[ "${1:-}" == --index ]]; then
  shift
  dists=("$@")
  ((${#dists[@]})) || dists=(trixie noble bookworm)
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  status=0
  for dist in "${dists[@]}"; do
    read -r mirror suite components <<<"$(dist_archive "$dist")"
    index="$tmp/$dist.packages"
    : >"$index"
    for c in $components; do
      curl -sfL "$mirror/dists/$suite/$c/binary-amd64/Packages.xz" | xz -dc >>"$index"
    done
    dist_os_release "$dist" >"$tmp/os-release"
    mapfile -t packages < <(ATTNSCOPE_OS_RELEASE="$tmp/os-release" bash scripts/setup.sh --list-packages)
    missing=()
    for p in "${packages[@]}"; do
      v=$(awk -v p="$p" '$1 == "Package:" { n = $2 } $1 == "Version:" && n == p { print $2; exit }' "$index")
      [[ -n "$v" ]] || missing+=("$p")
    done
    versions=$(awk '$1 == "Package:" { n = $2 }
      $1 == "Version:" && (n == "libimgui-dev" || n == "cmake" || n == "g++" || n == "libglfw3-dev") { printf "%s %s  ", n, $2 }' "$index")
    if ((${#missing[@]})); then
      echo "$dist: ${#packages[@]} packages, MISSING from the index: ${missing[*]}"
      status=1
    else
      echo "$dist: all ${#packages[@]} packages exist (clang-$(ATTNSCOPE_OS_RELEASE="$tmp/os-release" bash scripts/setup.sh --clang-version); $versions)"
    fi
  done
  exit "$status"
fi

# ---- a build in a chroot ----------------------------------------------------------------------
DIST="${1:-trixie}"
read -r MIRROR SUITE COMPONENTS <<<"$(dist_archive "$DIST")"
ROOT="${ATTNSCOPE_CHROOT:-/var/tmp/attnscope-chroot-$DIST}"
JOBS="${ATTNSCOPE_DISTRO_JOBS:-2}"
if [[ $(id -u) -ne 0 ]]; then
  echo "distro_check: debootstrap and chroot need root" >&2
  exit 1
fi
log() { echo "distro_check[$DIST]: $*"; }

if ! command -v debootstrap >/dev/null; then
  log "installing debootstrap on the host"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
fi

if [[ ! -x "$ROOT/usr/bin/apt-get" ]]; then
  log "debootstrap $SUITE into $ROOT (minutes)"
  mkdir -p "$ROOT"
  script=()
  # An older debootstrap (Debian 12's) has no script for a newer Ubuntu: they all share gutsy's.
  if [[ ! -e "/usr/share/debootstrap/scripts/$SUITE" && "$DIST" == noble ]]; then
    script=(/usr/share/debootstrap/scripts/gutsy)
  fi
  keyring=()
  if [[ "$DIST" == noble && ! -e /usr/share/keyrings/ubuntu-archive-keyring.gpg ]]; then
    keyring=(--no-check-gpg)  # packages still come over plain http from Ubuntu's archive
  fi
  nice -n 19 debootstrap --variant=minbase --include=ca-certificates "${keyring[@]}" \
    --components="${COMPONENTS// /,}" "$SUITE" "$ROOT" "$MIRROR" "${script[@]}"
fi
# The updates (and security updates) of a release, as an installed system has them.
case "$DIST" in
  bookworm | trixie)
    printf 'deb %s %s main\ndeb %s %s-updates main\ndeb http://security.debian.org/debian-security %s-security main\n' \
      "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" "$SUITE" >"$ROOT/etc/apt/sources.list"
    ;;
  noble)
    printf 'deb %s %s %s\ndeb %s %s-updates %s\ndeb %s %s-security %s\n' "$MIRROR" "$SUITE" "$COMPONENTS" \
      "$MIRROR" "$SUITE" "$COMPONENTS" "$MIRROR" "$SUITE" "$COMPONENTS" >"$ROOT/etc/apt/sources.list"
    # debootstrap installs Ubuntu's keyring inside; only without it does apt go unauthenticated.
    [[ -e "$ROOT/usr/share/keyrings/ubuntu-archive-keyring.gpg" ]] ||
      echo 'APT::Get::AllowUnauthenticated "true"; Acquire::AllowInsecureRepositories "true";' \
        >"$ROOT/etc/apt/apt.conf.d/99attnscope-unsigned"
    ;;
esac
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"

mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
mount_in() {  # type-or-bind source target
  mkdir -p "$ROOT$3"
  if mountpoint -q "$ROOT$3"; then return; fi
  if [[ "$1" == bind ]]; then mount --bind "$2" "$ROOT$3"; else mount -t "$1" "$2" "$ROOT$3"; fi
  mounted+=("$ROOT$3")
}
mount_in proc proc /proc
mount_in sysfs sys /sys
mount_in bind /dev /dev
mount_in devpts devpts /dev/pts
mount_in tmpfs tmpfs /dev/shm

# The source: HEAD as committed (git archive), plus the gitignored test data when present.
log "copying HEAD ($(git rev-parse --short HEAD)) into $ROOT/src/attnscope"
rm -rf "$ROOT/src/attnscope"
mkdir -p "$ROOT/src/attnscope" "$ROOT/build"
git archive HEAD | tar -x -C "$ROOT/src/attnscope"
if [[ -d tests/data/npm ]]; then
  mkdir -p "$ROOT/src/attnscope/tests/data"
  cp -a tests/data/npm "$ROOT/src/attnscope/tests/data/"
fi

in_root() { chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
  TERM=dumb bash -c "$1"; }

results=()
step() {  # name command
  local name=$1 rc=0 started=$SECONDS
  log "== $name"
  in_root "$2" || rc=$?
  results+=("$(printf '%-34s %s (%d s)' "$name" "$([[ $rc == 0 ]] && echo ok || echo "FAILED rc=$rc")" $((SECONDS - started)))")
  return "$rc"
}

TESTS="${ATTNSCOPE_DISTRO_TESTS:-0}"
targets="attnscope"
((TESTS)) && targets="all"
failed=0
step "setup.sh --packages-only" "cd /src/attnscope && bash scripts/setup.sh --packages-only" || failed=1
[[ "${ATTNSCOPE_DISTRO_BUILD:-1}" == 0 ]] && ((!failed)) && failed=2
if ((!failed)); then
  step "configure" "cd /src/attnscope && cmake -S . -B /build/attnscope -DCMAKE_BUILD_TYPE=Release \
    -DATTNSCOPE_BUILD_BENCH=OFF -DATTNSCOPE_WITH_CUDA=OFF -DATTNSCOPE_BUILD_TESTS=$((TESTS ? 1 : 0)) \
    >/build/configure.log 2>&1 || { tail -n 40 /build/configure.log; exit 1; }; \
    grep -E 'imgui|Found|vector flags' /build/configure.log | head -n 20" || failed=1
fi
if ((!failed)); then
  step "build ($targets)" "nice -n 19 cmake --build /build/attnscope -j$JOBS --target $targets \
    >/build/build.log 2>&1; rc=\$?; grep -E '(warning|error):' /build/build.log | cut -c1-240 | head -n 40; \
    tail -n 3 /build/build.log; exit \$rc" || failed=1
fi
if ((!failed)); then
  app=/build/attnscope/bin/attnscope
  step "attnscope models" "cd / && $app models" || failed=1
  step "attnscope export (lesson)" "cd / && $app export --model lesson --text 'the cat sat on the mat' \
    -o /build/lesson.json && head -c 300 /build/lesson.json && echo" || failed=1
  step "attnscope render (svg)" "cd / && $app render --view heatmap --layer 0 --head 0 --model lesson \
    --text 'the cat sat on the mat' -o /build/heatmap.svg && ls -l /build/heatmap.svg" || failed=1
  step "screenshot under Xvfb" "cd / && xvfb-run -a -s '-screen 0 1600x1000x24' $app --screenshot /build/shot.png \
    && ls -l /build/shot.png" || failed=1
  if ((TESTS)); then
    step "ctest -L unit" "cd /build/attnscope && ctest -L unit -j$JOBS --timeout 600 \
      >/build/ctest.log 2>&1; rc=\$?; grep -E 'tests passed|tests failed|\\*\\*\\*Failed|Not Run' /build/ctest.log | head -n 40; exit \$rc" || failed=1
  fi
fi

echo
echo "==== attnscope on $DIST ($(. "$ROOT/etc/os-release" && echo "$PRETTY_NAME"), HEAD $(git rev-parse --short HEAD))"
echo "Dear ImGui: $(in_root "dpkg-query -W -f='\${Version}' libimgui-dev 2>/dev/null" || echo '?'), GCC: $(in_root 'gcc -dumpfullversion 2>/dev/null' || echo '?'), clang: $(in_root 'ls /usr/bin/clang-[0-9]* 2>/dev/null | tr "\n" " "' || true)"
printf '  %s\n' "${results[@]}"
((failed == 2)) && echo "  (ATTNSCOPE_DISTRO_BUILD=0: not built)" && failed=0
echo "logs: $ROOT/build/{configure,build,ctest}.log; screenshot: $ROOT/build/shot.png"
exit "$failed"
