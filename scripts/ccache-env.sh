# Sourced by the build scripts: where ccache is installed, key its objects by paths relative to
# the checkout, so another clone or worktree on this machine (CI's fresh clone included) reuses
# what this one compiled. Sets CCACHE_LAUNCHER to the cmake arguments that turn it on.
CCACHE_LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
  CCACHE_LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
