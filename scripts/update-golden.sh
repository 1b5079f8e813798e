#!/usr/bin/env bash
# Regenerates tests/golden/ (summary.json and schedule.json of every zoo network x preset x
# {none, greedy, search}, and of the corpus models in tests/golden/corpus/) from this checkout's
# build. The corpus cases need the ONNX corpus: CTest exports it first (torch, a few minutes).
# Run it only when a change is meant to move figures, read `git diff --stat tests/golden` and say in the commit message why they moved
# (docs/architecture.md, "Golden outputs").
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
NPUSIM_GOLDEN_UPDATE=1 ctest --test-dir build -R '^(Zoo|Corpus)/Golden\.' -j"$(nproc)" --output-on-failure >/dev/null
git status --short tests/golden | head -40
echo "update-golden: tests/golden regenerated; $(git status --short tests/golden | wc -l) files changed"
