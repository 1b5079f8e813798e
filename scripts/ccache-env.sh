# Sourced by the build scripts: where ccache is installed, key its objects by paths relative to
# the checkout, so another clone or worktree on this machine (CI's fresh clone included) reuses
# what this one compiled. Sets CCACHE_LAUNCHER to the cmake arguments that turn it on; the
# launcher carries the settings itself (env VAR=... ccache), so a later `cmake --build` of the
# folder keys its objects the same way without this file sourced.
CCACHE_LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
  launcher="env;CCACHE_BASEDIR=$PWD;CCACHE_NOHASHDIR=true;ccache"
  CCACHE_LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" -DCMAKE_C_COMPILER_LAUNCHER="$launcher")
fi
