#!/usr/bin/env bash
# out-of-memory: setup.py build_ext (setuptools' distutils backend, as torch's cpp_extension
# falls back to without ninja) whose compiler ends by SIGKILL, the signal the kernel's OOM
# killer sends. The OOM killer itself cannot be set off on this shared machine, so the
# compiler here is a script named g++ that runs the real g++-12 and then receives SIGKILL
# (kill -9 on its own pid): setuptools sees what it sees after an OOM kill.
# Writes rounds/d4/cases/real-setuptools-compiler-sigkill.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d4/cases
t=$(mktemp -d)
mkdir -p "$t/bin" "$t/pkg/csrc"
printf '#!/bin/sh\n/usr/bin/g++-12 "$@"\nkill -9 $$\n' > "$t/bin/g++"; chmod +x "$t/bin/g++"
echo 'int flash_fwd() { return 0; }' > "$t/pkg/csrc/flash_api.cpp"
cat > "$t/pkg/setup.py" <<'PY'
from setuptools import Extension, setup
setup(name="flash_attn_demo", ext_modules=[Extension("flash_attn_2", ["csrc/flash_api.cpp"])])
PY
(cd "$t/pkg" && CC="$t/bin/g++" CXX="$t/bin/g++" LDSHARED="$t/bin/g++ -shared" \
  python3 setup.py build_ext 2>&1) | sed -e "s#$t/bin#/usr/bin#g" -e "s#$t/pkg#/home/user/flash-attention#g" \
  > "$cases/real-setuptools-compiler-sigkill.log"
rm -rf "$t"
