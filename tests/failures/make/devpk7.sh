#!/usr/bin/env bash
# Python packaging families of issue 40 (r15 after, devpk7), made with the real program:
#  - CPython (python3 here, 3.11.7): a package under site-packages calling
#    importlib.metadata.MetadataPathFinder.invalidate_caches() on the class
#    (python-packaging: importlib-metadata-finder-invalidate-caches)
# Writes rounds/d9/cases/real-metadata-finder-invalidate-caches.log (the .toml answer is
# committed beside it).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
t=$(mktemp -d)
mkdir -p "$t/site-packages/wheelkit"
cat > "$t/site-packages/wheelkit/__init__.py" <<'PY'
import importlib.metadata as md


def refresh():
    md.MetadataPathFinder.invalidate_caches()
PY
(cd "$t" && PYTHONPATH="$t/site-packages" python3 -c 'import wheelkit; wheelkit.refresh()' 2>&1) \
  | sed "s|$t|/venv/lib/python3.11|" > "$cases/real-metadata-finder-invalidate-caches.log"
rm -rf "$t"
