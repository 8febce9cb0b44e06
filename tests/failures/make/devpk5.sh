#!/usr/bin/env bash
# devpk5's d8 cases: real output of real programs here (gcc, glibc's ld.so, pip).
#  - real-ld-so-program-no-runpath-libamdhip64: a program linked against a stand-in
#    libamdhip64.so.7 without an rpath, started after the library's folder is off the loader
#    path: ld.so's "error while loading shared libraries" (the program's RUNPATH is the fix).
#  - real-pip-cache-command-cache-disabled: `pip cache remove` with the cache disabled.
# Writes rounds/d8/cases/<id>.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d8/cases
t=$(mktemp -d)
mkdir -p "$t/sdk/lib"
echo 'int hipInit(unsigned flags) { return (int)flags; }' > "$t/hip.c"
echo 'int hipInit(unsigned flags); int main(void) { return hipInit(0); }' > "$t/main.c"
gcc -shared -fPIC -Wl,-soname,libamdhip64.so.7 -o "$t/sdk/lib/libamdhip64.so.7" "$t/hip.c"
ln -s libamdhip64.so.7 "$t/sdk/lib/libamdhip64.so"
gcc "$t/main.c" -L"$t/sdk/lib" -lamdhip64 -o "$t/test_opus_basic"
(cd "$t" && LANG=C env -u LD_LIBRARY_PATH ./test_opus_basic 2>&1; echo "exit code $?") \
  > "$cases/real-ld-so-program-no-runpath-libamdhip64.log"
(cd "$t" && LANG=C python3 -m pip --no-cache-dir cache remove rocm_sdk 2>&1; echo "exit code $?") \
  > "$cases/real-pip-cache-command-cache-disabled.log"
rm -rf "$t"
