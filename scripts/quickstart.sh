#!/usr/bin/env bash
# From a fresh Debian machine: install dependencies, build, and run the main job on built-in
# defaults (MobileNetV2 on edge-m, unfused vs greedy fusion, side by side).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build/npusim compare "$@"
echo "next: build/npusim serve   (the live page: change the NPU in the browser and watch the roofline move)"
