#!/usr/bin/env bash
# Installs what attnscope needs (only the packages that are missing), then configures and builds
# into build/. Used by scripts/open.sh and scripts/test.sh; safe to run again.
#   --packages-only   install the packages, do not configure or build
#   --list-packages   print the package list for this distribution (one a line) and exit
#   --clang-version   print the clang version the sanitizer/fuzz stage uses here (14 on Debian 12)
# Debian 12 (CI) is the reference. Debian 13 (trixie) and Ubuntu 24.04 (noble, with "universe"
# enabled) get the same list with their names for what differs: the clang/libFuzzer version, and no
# python3-torch on noble (only the Python bridge's tests use it).
# scripts/distro_check.sh checks the lists against each distribution's package index.
set -euo pipefail
cd "$(dirname "$0")/.."

# The distribution, from os-release (ATTNSCOPE_OS_RELEASE names another file: distro_check.sh).
OS_ID=""
OS_VERSION_ID=""
OS_RELEASE="${ATTNSCOPE_OS_RELEASE:-/etc/os-release}"
if [[ -r "$OS_RELEASE" ]]; then
  # shellcheck disable=SC1090
  OS_ID=$(. "$OS_RELEASE" && echo "${ID:-}")
  # shellcheck disable=SC1090
  OS_VERSION_ID=$(. "$OS_RELEASE" && echo "${VERSION_ID:-}")
fi
case "$OS_ID:$OS_VERSION_ID" in
  debian:13) CLANG_VERSION=19 ;;
  ubuntu:24.04) CLANG_VERSION=18 ;;
  *) CLANG_VERSION=14 ;;  # Debian 12, and anything not listed above
esac

PACKAGES=(
  build-essential cmake pkg-config ccache
  zlib1g-dev libeigen3-dev nlohmann-json3-dev libcli11-dev libutf8proc-dev libonig-dev libcurl4-openssl-dev
  libssl-dev
  libglfw3-dev libimgui-dev python3-glad libstb-dev fonts-dejavu-core
  libgtest-dev libgmock-dev libbenchmark-dev
  xvfb xauth libgl1-mesa-dri xdotool x11-xkb-utils xclip xdg-user-dirs
  libcairo2-dev librsvg2-bin poppler-utils python3-numpy python3-sentencepiece
  python3-torch libopenblas0-pthread python3-pip python3-venv python3-setuptools
  appstream desktop-file-utils dpkg-dev
  libpango1.0-dev libharfbuzz-dev libfribidi-dev libfreetype-dev libfontconfig-dev
  fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji fonts-symbola
  libegl-dev libegl-mesa0 libopengl-dev
  nodejs npm
  "clang-$CLANG_VERSION" "libfuzzer-$CLANG_VERSION-dev"
)
if [[ "$OS_ID:$OS_VERSION_ID" == ubuntu:24.04 ]]; then
  # Ubuntu 24.04 has no python3-torch package.
  for i in "${!PACKAGES[@]}"; do
    if [[ "${PACKAGES[$i]}" == python3-torch ]]; then unset 'PACKAGES[i]'; fi
  done
  PACKAGES=("${PACKAGES[@]}")
fi
if [[ -n "${ATTNSCOPE_EXTRA_PACKAGES:-}" ]]; then
  read -r -a extra <<<"$ATTNSCOPE_EXTRA_PACKAGES"
  PACKAGES+=("${extra[@]}")
fi
case "${1:-}" in
  --list-packages)
    printf '%s\n' "${PACKAGES[@]}"
    exit 0
    ;;
  --clang-version)
    echo "$CLANG_VERSION"
    exit 0
    ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    # npm from nodejs' own packaging provides /usr/bin/npm without Debian's npm package.
    if [[ "$p" == npm ]] && command -v npm >/dev/null; then continue; fi
    if [[ "$p" == nodejs ]] && command -v node >/dev/null; then continue; fi
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "attnscope setup: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  if [[ "$OS_ID" == ubuntu ]] && ! apt-cache show libimgui-dev >/dev/null 2>&1; then
    echo "attnscope setup: Ubuntu's \"universe\" component is not enabled (libimgui-dev is there):" \
      "sudo add-apt-repository universe" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [[ "${1:-}" == "--packages-only" ]]; then exit 0; fi

JOBS=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${ATTNSCOPE_CMAKE_ARGS:-}
cmake --build build -j"$JOBS"
