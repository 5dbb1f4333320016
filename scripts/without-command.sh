#!/usr/bin/env bash
# Run a command on a PATH that lacks one program, as on a fresh machine without it:
#   scripts/without-command.sh bwrap .venv/bin/python -m pytest tests/test_tools.py
# Every other program of /usr/bin and /bin stays reachable through symlinks.
set -euo pipefail
missing=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for f in /usr/local/bin/* /usr/bin/* /bin/*; do
  [ -f "$f" ] || continue  # programs only (no folders, no broken links)
  name=$(basename "$f")
  [ "$name" = "$missing" ] || [ -L "$dir/$name" ] || ln -s "$f" "$dir/$name"
done
PATH="$dir" "$@"
