#!/usr/bin/env bash
# Regenerates docs/config.md's "Keys" and "Valid ranges" tables from the one key table
# (sim/config/config_keys.cpp) with this checkout's build: `npusim keys --doc` prints the doc with
# the tables rewritten between their markers, and this script puts that in place.
# CTest ConfigKeys.DocTablesAreGenerated fails until the doc matches the table.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/npusim ] || { echo "update-config-doc: build first (scripts/build.sh)" >&2; exit 2; }
tmp=$(mktemp docs/.config.md.XXXXXX)
trap 'rm -f "$tmp"' EXIT
build/npusim keys --doc docs/config.md >"$tmp"
mv "$tmp" docs/config.md
trap - EXIT
echo "update-config-doc: docs/config.md regenerated; $(git diff --stat docs/config.md | tail -1)"
