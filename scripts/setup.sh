#!/usr/bin/env bash
# Installs what attnscope needs on Debian 12 (only the packages that are missing), then configures
# and builds into build/. Used by scripts/open.sh and scripts/test.sh; safe to run again.
#   --packages-only   install the packages, do not configure or build
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake pkg-config ccache
  zlib1g-dev libeigen3-dev nlohmann-json3-dev libcli11-dev libutf8proc-dev libonig-dev libcurl4-openssl-dev
  libssl-dev
  libglfw3-dev libimgui-dev python3-glad libstb-dev fonts-dejavu-core
  libgtest-dev libgmock-dev libbenchmark-dev
  xvfb xauth libgl1-mesa-dri xdotool x11-xkb-utils xclip
  libcairo2-dev librsvg2-bin poppler-utils python3-numpy python3-sentencepiece
  python3-torch libopenblas0-pthread python3-pip python3-venv python3-setuptools
  appstream desktop-file-utils dpkg-dev
  libpango1.0-dev libharfbuzz-dev libfribidi-dev libfreetype-dev libfontconfig-dev
  fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji fonts-symbola
  libegl-dev libegl-mesa0
  nodejs npm
  clang-14 libfuzzer-14-dev
)
if [[ -n "${ATTNSCOPE_EXTRA_PACKAGES:-}" ]]; then
  read -r -a extra <<<"$ATTNSCOPE_EXTRA_PACKAGES"
  PACKAGES+=("${extra[@]}")
fi

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
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [[ "${1:-}" == "--packages-only" ]]; then exit 0; fi

JOBS=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${ATTNSCOPE_CMAKE_ARGS:-}
cmake --build build -j"$JOBS"
