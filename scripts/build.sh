#!/usr/bin/env bash
# Configures and builds npusim (Release) into build/. Extra arguments go to cmake's configure.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ccache-env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${CCACHE_LAUNCHER[@]}" "$@" >/dev/null
cmake --build build -j"$(nproc)"
# The web front end (web/: npusim serve's live page and report.html's template), rebuilt when
# web/dist is missing or older than its sources. Without npm the C++ still works: npusim run
# then skips report.html with a warning, and npusim serve says how to build the page.
if command -v npm >/dev/null 2>&1; then
  # web/ and validation/ (the silicon rows' ONNX models) install what their lock files pin.
  for pkg in web validation; do
    if [ ! -f $pkg/node_modules/.package-lock.json ] || [ $pkg/package-lock.json -nt $pkg/node_modules/.package-lock.json ]; then
      npm --prefix $pkg ci --no-audit --no-fund
    fi
  done
  stamp=web/dist/report-template.html
  if [ ! -f "$stamp" ] || [ -n "$(find web/src web/index.html web/report.html web/vite.config.js web/vite.report.config.js \
        web/scripts web/package-lock.json -newer "$stamp" -print -quit)" ]; then
    npm --prefix web run build
  fi
else
  echo "build.sh: npm not found; the web page and report.html are not built (scripts/install-deps.sh installs nodejs)"
fi
