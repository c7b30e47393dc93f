#!/bin/sh
# Fails when a C++ file of the tree differs from the project's clang-format
# style (.clang-format). Usage: check-format.sh SOURCE_DIR [CLANG_FORMAT]
# Fix with: clang-format-14 -i FILE...
set -eu
src="$1"
tool="${2:-clang-format-14}"
cd "$src"
files=$(find frontend ir passes runtime tools test bench fuzz \
  -name '*.cpp' -o -name '*.h' | sort)
bad=""
for f in $files; do
  if ! "$tool" --style=file "$f" | cmp -s - "$f"; then
    bad="$bad $f"
  fi
done
if [ -n "$bad" ]; then
  echo "these files differ from .clang-format (run \`$tool -i FILE\`):" >&2
  for f in $bad; do echo "  $f" >&2; done
  exit 1
fi
echo "$(echo "$files" | wc -l) files match .clang-format"
