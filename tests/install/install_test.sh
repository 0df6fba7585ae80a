#!/usr/bin/env bash
# The installed package (issue 25), registered in ctest as install_test (label install):
#   1. cpack -G DEB from the build tree; the .deb's fields and computed dependencies (no CUDA
#      libraries), its file list;
#   2. installed into a fresh root (dpkg --root into an empty dpkg database; dpkg-deb -x where that
#      cannot run);
#   3. run from / with the source and build trees hidden (a private mount namespace with an empty
#      tmpfs over each): --version, models, backends, export (trace JSON, tokens), tokenize on the
#      built-in stories model, render to SVG and PNG, a headless screenshot under xvfb-run (PNG not
#      one colour); appstreamcli, desktop-file-validate, man, the icons and the bash completion
#      on the installed files;
#   4. with the source tree visible again, an installed asset removed: the installed binary must
#      fail and name only installed folders (never fall back to the source tree's copy);
#   5. cmake --install --prefix DIR (every component) lays out the same tree.
# Usage: install_test.sh SOURCE_DIR BUILD_DIR. Exit 77 (ctest: skipped) when a tool is missing.
set -euo pipefail
SRC=$(realpath "$1")
BUILD=$(realpath "$2")
HERE=$(dirname "$(realpath "$0")")
APP_ID=io.github.attnscope.attnscope

fail() {
  echo "install_test: FAIL: $*" >&2
  exit 1
}
for tool in cpack dpkg-deb dpkg-shlibdeps xvfb-run appstreamcli desktop-file-validate man python3; do
  command -v "$tool" >/dev/null || { echo "install_test: $tool is missing, skipped"; exit 77; }
done
[[ -x $BUILD/bin/attnscope ]] || fail "$BUILD/bin/attnscope is not built"

WORK=$(mktemp -d /tmp/attnscope-install.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
case "$WORK/" in "$SRC/"* | "$BUILD/"*) fail "the temporary folder is inside the trees it hides" ;; esac

# 1. The package.
cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$WORK/pkg" >"$WORK/cpack.log" 2>&1 ||
  { cat "$WORK/cpack.log"; fail "cpack -G DEB failed"; }
debs=("$WORK"/pkg/*.deb)
[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || { ls -la "$WORK/pkg"; fail "expected one .deb"; }
DEB=${debs[0]}
echo "install_test: built $(basename "$DEB") ($(du -k "$DEB" | cut -f1) KiB)"
field() { dpkg-deb -f "$DEB" "$1"; }
for f in Package Version Architecture Maintainer Section Homepage Depends Description; do
  [[ -n $(field "$f") ]] || fail "the package has no $f field"
  echo "  $f: $(field "$f" | head -n 1)"
done
[[ $(field Package) == attnscope ]] || fail "package name $(field Package)"
depends=$(field Depends)
# Computed by dpkg-shlibdeps: the C library and the libraries the executable links (GLFW, cairo,
# curl...), plus the fonts declared by hand.
for want in libc6 libstdc++6 libglfw3 libcairo2 libcurl fonts-dejavu-core; do
  [[ $depends == *"$want"* ]] || fail "Depends lacks $want: $depends"
done
[[ $depends != *cuda* && $depends != *cublas* ]] || fail "Depends names CUDA libraries: $depends"
# Each dependency (one of its alternatives, at the version asked) is a package this machine, which
# runs the installed binary below, has installed: the computed list names real packages.
IFS=',' read -r -a clauses <<<"$depends"
for clause in "${clauses[@]}"; do
  met=0
  IFS='|' read -r -a alternatives <<<"$clause"
  for alt in "${alternatives[@]}"; do
    read -r name op version <<<"$(sed -E 's/[()]//g' <<<"$alt")"
    installed=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
    [[ $installed == "install ok installed "* ]] || continue
    if [[ -z ${op:-} ]] || dpkg --compare-versions "${installed##* }" "$op" "$version"; then met=1; fi
  done
  ((met)) || fail "the dependency '$clause' is not met on this machine (Depends: $depends)"
done
dpkg-deb -c "$DEB" >"$WORK/files.txt"
for want in ./usr/bin/attnscope ./usr/share/attnscope/assets/lesson_vectors.bin \
  ./usr/share/attnscope/assets/presets.json ./usr/share/attnscope/assets/tiny_model/config.json \
  ./usr/share/attnscope/assets/stories260K/model.safetensors \
  ./usr/share/applications/$APP_ID.desktop ./usr/share/metainfo/$APP_ID.metainfo.xml \
  ./usr/share/icons/hicolor/scalable/apps/$APP_ID.svg ./usr/share/man/man1/attnscope.1 \
  ./usr/share/bash-completion/completions/attnscope; do
  grep -q " $want\$" "$WORK/files.txt" || fail "the package lacks $want"
done
! grep -q libattnscope_cuda "$WORK/files.txt" || fail "the package carries the CUDA module"
! grep -q "assets/colormaps" "$WORK/files.txt" || fail "the package carries the embedded colormaps"
if [[ -f $BUILD/bin/libattnscope_gl.so ]]; then
  grep -q " ./usr/lib/attnscope/libattnscope_gl.so\$" "$WORK/files.txt" ||
    fail "the package lacks the OpenGL module"
fi

# 2. A fresh root: an empty dpkg database, the package installed with dpkg --root (its
# dependencies live in the host system, not in this root, hence --force-depends).
ROOT=$WORK/root
mkdir -p "$ROOT/var/lib/dpkg/info" "$ROOT/var/lib/dpkg/updates" "$ROOT/var/lib/dpkg/triggers"
: >"$ROOT/var/lib/dpkg/status"
: >"$ROOT/var/lib/dpkg/available"
if dpkg --root="$ROOT" --force-depends --force-not-root --force-script-chrootless \
  --log=/dev/null -i "$DEB" >"$WORK/dpkg.log" 2>&1; then
  dpkg --root="$ROOT" -s attnscope | grep -q "^Status: install ok installed" ||
    fail "dpkg --root did not record the package"
  echo "install_test: installed with dpkg --root=$ROOT"
else
  cat "$WORK/dpkg.log"
  echo "install_test: dpkg --root failed (above); extracting with dpkg-deb -x instead"
  dpkg-deb -x "$DEB" "$ROOT"
fi
EXE=$ROOT/usr/bin/attnscope
[[ -x $EXE ]] || fail "no $EXE"

# 3. The checks that run from / with the source and build trees hidden.
export HOME=$WORK/home XDG_CONFIG_HOME=$WORK/home/.config XDG_CACHE_HOME=$WORK/home/.cache
export XDG_DATA_HOME=$WORK/home/.local/share XDG_RUNTIME_DIR=$WORK/run HF_HOME=$WORK/hf
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" "$HF_HOME"
chmod 700 "$XDG_RUNTIME_DIR"
unset ATTNSCOPE_ASSETS ATTNSCOPE_GL_MODULE ATTNSCOPE_CUDA_MODULE
export EXE ROOT WORK SRC BUILD HERE APP_ID
hide="mount -t tmpfs -o size=1m attnscope-hidden '$SRC'"
case "$BUILD/" in "$SRC/"*) ;; *) hide+=" && mount -t tmpfs -o size=1m attnscope-hidden '$BUILD'" ;; esac
cp "$HERE/installed_checks.sh" "$HERE/png_check.py" "$WORK/"
if unshare --mount --propagation private true 2>/dev/null; then
  unshare --mount --propagation private bash -c "$hide && cd / && exec bash '$WORK/installed_checks.sh'"
elif unshare --user --map-root-user --mount true 2>/dev/null; then
  unshare --user --map-root-user --mount bash -c "$hide && cd / && exec bash '$WORK/installed_checks.sh'"
else
  fail "cannot hide the source tree here (unshare --mount needs root or user namespaces)"
fi

# 4. The installed binary never falls back to the source tree, even where it is present: with
# one installed asset gone, the lesson model must fail and name only the installed folder.
mv "$ROOT/usr/share/attnscope/assets/lesson_vectors.bin" "$WORK/lesson_vectors.bin"
if out=$(cd / && "$EXE" export --text "The bank of the river" -o "$WORK/no.json" 2>&1); then
  fail "with lesson_vectors.bin removed from the install, export still ran (read from elsewhere)"
fi
[[ $out == *"$ROOT/usr/share/attnscope/assets/lesson_vectors.bin"* ]] ||
  fail "the error does not name the installed folder: $out"
[[ $out != *"$SRC"* ]] || fail "the installed binary looked in the source tree: $out"
mv "$WORK/lesson_vectors.bin" "$ROOT/usr/share/attnscope/assets/lesson_vectors.bin"
echo "install_test: an installed binary with an asset missing fails, never reading $SRC"

# 5. cmake --install into a prefix: the same layout, the CUDA module (component cuda) too when built.
PREFIX=$WORK/prefix
cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" 2>&1 ||
  { cat "$WORK/install.log"; fail "cmake --install failed"; }
for want in bin/attnscope share/attnscope/assets/presets.json share/man/man1/attnscope.1 \
  share/applications/$APP_ID.desktop share/metainfo/$APP_ID.metainfo.xml; do
  [[ -f $PREFIX/$want ]] || fail "cmake --install did not write $want"
done
if [[ -f $BUILD/bin/libattnscope_cuda.so ]]; then
  [[ -f $PREFIX/lib/attnscope/libattnscope_cuda.so ]] || fail "cmake --install left out the CUDA module"
fi
if [[ -f $BUILD/bin/libattnscope_gl.so ]]; then
  out=$(cd / && "$PREFIX/bin/attnscope" backends 2>&1) || fail "backends from the prefix: $out"
  [[ $out != *"OpenGL module was not built"* ]] || fail "the prefix's binary misses its module: $out"
fi
echo "install_test: passed"
