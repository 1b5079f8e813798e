#!/usr/bin/env bash
# Regenerates docs/config.md's "Keys" and "Valid ranges" tables from the one key table
# (sim/config/config_keys.cpp), and docs/run-options.md's and docs/serve.md's tables of run options
# from the run options' table (sim/engine/run_options.cpp), with this checkout's build:
# `npusim keys --doc` prints a doc with its tables rewritten between their markers, and this script
# puts that in place.
# CTests ConfigKeys.DocTablesAreGenerated and RunOptions.DocTablesAreGenerated fail until the docs
# match the tables.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/npusim ] || { echo "update-config-doc: build first (scripts/build.sh)" >&2; exit 2; }
for doc in docs/config.md docs/run-options.md docs/serve.md; do
  tmp=$(mktemp "docs/.$(basename "$doc").XXXXXX")
  trap 'rm -f "$tmp"' EXIT
  build/npusim keys --doc "$doc" >"$tmp"
  mv "$tmp" "$doc"
  trap - EXIT
  echo "update-config-doc: $doc regenerated; $(git diff --stat "$doc" | tail -1)"
done
