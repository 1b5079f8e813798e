#!/usr/bin/env bash
# Installs npusim's build and run dependencies from Debian's archive. Idempotent: when every
# package is already installed it does nothing (and needs no network).
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  libsystemc-dev            # SystemC 2.3 + TLM-2.0
  libboost-dev libboost-program-options-dev
  libspdlog-dev libfmt-dev
  libyaml-cpp-dev nlohmann-json3-dev
  libonnx-dev libprotobuf-dev protobuf-compiler   # ONNX import (workloads/onnx/)
  libgtest-dev libgmock-dev googletest
  libbenchmark-dev
  gnuplot-nox               # roofline plots
  time bc                   # bench/run_benchmarks.sh
  clang-14 libclang-rt-14-dev   # scripts/sanitize.sh, scripts/fuzz.sh (ASan, UBSan, libFuzzer)
  python3-onnx              # fuzz/make_onnx_seeds.py (ONNX seeds for fuzzing)
)
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
