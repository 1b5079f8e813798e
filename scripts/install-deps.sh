#!/usr/bin/env bash
# Installs npusim's build and run dependencies from Debian's archive. Idempotent: when every
# package is already installed it does nothing (and needs no network).
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  ccache                    # scripts/build.sh: a fresh clone on this machine reuses compiled objects
  libnlopt-dev              # npusim calibrate: bounded least squares (sim/engine/calibration.cpp)
  libsystemc-dev            # SystemC 2.3 + TLM-2.0
  libboost-dev libboost-program-options-dev
  libspdlog-dev libfmt-dev
  libmimalloc-dev           # the npusim executable's allocator
  libyaml-dev libyaml-cpp-dev nlohmann-json3-dev   # YAML: libyaml parses, yaml-cpp converts scalars
  libonnx-dev libprotobuf-dev protobuf-compiler   # ONNX import (workloads/onnx/)
  libgtest-dev libgmock-dev googletest
  libbenchmark-dev
  gnuplot-nox               # roofline plots
  time bc                   # bench/run_benchmarks.sh
  pybind11-dev python3-dev python3-pybind11 python3-pytest python3-pandas   # sim/python, tests/python
  python3-jsonschema        # tests/python/test_schedule_schema.py (docs/schedule.schema.json)
  slurm-wlm munge           # scripts/test-slurm.sh: sweeps as a Slurm job array (docs/sweep.md)
  nodejs                    # web/: builds the live page (npusim serve) and report.html (Vite)
  chromium                  # web/tests/browser.mjs: headless browser tests (playwright-core)
  python3-onnx python3-torch python3-torchvision  # the real-model ONNX corpus (scripts/export_corpus.py)
  clang-14 libclang-rt-14-dev   # scripts/sanitize.sh, scripts/fuzz.sh (ASan, UBSan, libFuzzer)
  clang-format-14           # scripts/format.sh (.clang-format), checked by the CTest format_check
)
command -v npm >/dev/null 2>&1 || packages+=(npm)  # Debian's npm, unless the nodejs build has its own
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
