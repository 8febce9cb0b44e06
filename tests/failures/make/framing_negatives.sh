#!/usr/bin/env bash
# negatives: the frames build tools print around a failure, with an ordinary error inside
# that proves no class: ninja's "FAILED:" and "build stopped", make's "*** [...] Error 1"
# around a C++ syntax error (g++-12), and pip's "metadata-generation-failed" around a
# setup.py that raises a plain RuntimeError (pip from the system python, no network).
# Writes rounds/d4/cases/real-neg-ninja-make-syntax-error.log, real-neg-pip-metadata-frame.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d4/cases
t=$(mktemp -d)
printf 'int f() { return 0 }\n' > "$t/Module.cpp"
cat > "$t/build.ninja" <<'NJ'
rule cxx
  command = /usr/bin/g++-12 -O2 -fPIC -c $in -o $out
build torch/csrc/Module.cpp.o: cxx Module.cpp
NJ
printf 'all:\n\tninja\n' > "$t/Makefile"
(cd "$t" && LANG=C make 2>&1) | sed -e "s#$t#/home/user/pytorch/build#g" \
  > "$cases/real-neg-ninja-make-syntax-error.log"
mkdir -p "$t/pkg"
cat > "$t/pkg/setup.py" <<'PY'
from setuptools import setup
raise RuntimeError("this package needs the environment variable FOO_VERSION")
setup(name="foo")
PY
(cd "$t" && python3 -m pip install --no-index --no-build-isolation --disable-pip-version-check \
  ./pkg 2>&1) | sed -e "s#$t#/tmp/build#g" > "$cases/real-neg-pip-metadata-frame.log"
rm -rf "$t"
