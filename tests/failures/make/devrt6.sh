#!/usr/bin/env bash
# Cases for the GPU run-time families of devrt6 (issue 40), made with the real programs here,
# written to rounds/d9/cases (.log only; the .toml beside each is committed by hand):
#  real-rocminfo-amdgpu-module-not-loaded: the real rocminfo 5.2.3 (Debian 12) on a machine
#    without the amdgpu kernel module (/sys/module/amdgpu absent); its colour codes are kept.
#  real-hip-error-out-of-memory-rocm5: the real ROCm 5.2 libamdhip64.so.5 names error 2
#    (hipGetErrorString gives 'hipErrorOutOfMemory' in ROCm 5); the lines around it are a
#    stand-in for torch's C10_HIP_CHECK report (no GPU here to run torch on).
#  real-hip-invalid-device-ordinal-visible-devices: the same library's text for error 101
#    (hipErrorInvalidDevice), after a command line that sets HIP_VISIBLE_DEVICES=0 and asks
#    for device 1 (stand-in report lines as above).
#  real-triton-out-of-resources-shared-memory: the real Triton 3.4.0 (/opt/rf-triton-3.4.0)
#    raising its own OutOfResources from CompiledKernel's launch check, with the values a
#    kernel needing 98304 bytes of LDS gets on a GPU with 65536 (no GPU here to compile on).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
mkdir -p "$cases"
t=$(mktemp -d)
rocminfo > "$cases/real-rocminfo-amdgpu-module-not-loaded.log" 2>&1
cat > "$t/name.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
typedef const char *(*str_fn)(int);
int main(int argc, char **argv) {
  void *h = dlopen("libamdhip64.so.5", RTLD_NOW);
  if (!h || argc < 2) return 1;
  str_fn text = (str_fn)dlsym(h, "hipGetErrorString");
  printf("%s\n", text(atoi(argv[1])));
  return 0;
}
C
gcc -o "$t/name" "$t/name.c" -ldl
torch_report() {  # $1: the runtime's text for the error
  printf 'Traceback (most recent call last):\n  File "/home/user/run.py", line 9, in <module>\n'
  printf '    x = torch.empty(n, device=dev)\nRuntimeError: HIP error: %s\n' "$1"
  printf 'HIP kernel errors might be asynchronously reported at some other API call, so the '
  printf 'stacktrace below might be incorrect.\nFor debugging consider passing '
  printf 'AMD_SERIALIZE_KERNEL=3\nCompile with `TORCH_USE_HIP_DSA` to enable device-side '
  printf 'assertions.\n'
}
torch_report "$("$t/name" 2)" > "$cases/real-hip-error-out-of-memory-rocm5.log"
{ printf '$ HIP_VISIBLE_DEVICES=0 python3 run.py --device cuda:1\n'
  torch_report "$("$t/name" 101)"; } > "$cases/real-hip-invalid-device-ordinal-visible-devices.log"
cat > "$t/launch.py" <<'PY'
from triton.runtime.errors import OutOfResources


def init_handles(shared: int, max_shared: int) -> None:
    if shared > max_shared:
        raise OutOfResources(shared, max_shared, "shared memory")


init_handles(98304, 65536)
PY
(cd "$t" && /opt/rf-triton-3.4.0/bin/python launch.py 2>&1) | sed -e "s#$t#/home/user/kernels#g" \
  > "$cases/real-triton-out-of-resources-shared-memory.log"
rm -rf "$t"
# MIOpen's SQLite errors: the real SQLite 3.40.1 (Python's sqlite3 here) gives the errmsg text;
# MIOpen's 'MIOpen Error: <file>:<line>: Internal error while accessing SQLite database: '
# around it is a stand-in (no GPU here to run MIOpen on).
#  real-miopen-sqlite-readonly-kernel-cache: a database opened read-only, then written.
#  real-miopen-sqlite-disk-full-user-db: a database limited to its one page, then written.
t=$(mktemp -d)
sqlite_err() {  # $1 database, $2 mode: ro or full
  python3 - "$1" "$2" <<'PY'
import sqlite3
import sys

path, mode = sys.argv[1], sys.argv[2]
sqlite3.connect(path).executescript("create table t(x blob);")
db = sqlite3.connect(f"file:{path}?mode=ro" if mode == "ro" else path, uri=mode == "ro")
try:
    if mode == "full":
        db.execute("pragma max_page_count = 2")
    db.execute("insert into t values (zeroblob(65536))")
    db.commit()
except sqlite3.Error as err:
    print(err)
PY
}
miopen_err() {  # $1 MIOpen source file:line, $2 the SQLite text
  printf 'MIOpen Error: /long_pathname/MIOpen/src/include/miopen/%s: Internal error while ' "$1"
  printf 'accessing SQLite database: %s\n' "$2"
  printf 'RuntimeError: miopenStatusInternalError\n'
}
miopen_err kern_db.hpp:149 "$(sqlite_err "$t/k.db" ro)" \
  > "$cases/real-miopen-sqlite-readonly-kernel-cache.log"
miopen_err sqlite_db.hpp:436 "$(sqlite_err "$t/u.db" full)" \
  > "$cases/real-miopen-sqlite-disk-full-user-db.log"
rm -rf "$t"
#  real-triton-libhip-path-versioned-name: the real Triton 3.4.0's HIP runtime lookup with
#    TRITON_LIBHIP_PATH naming the versioned libamdhip64.so.6 (Triton takes only the
#    unversioned name), called the way its HIPDriver calls it.
t=$(mktemp -d)
printf 'from triton.backends.amd.driver import _get_path_to_hip_runtime_dylib\n%s\n' \
  '_get_path_to_hip_runtime_dylib()' > "$t/hip.py"
(cd "$t" && TRITON_LIBHIP_PATH=/opt/rocm-6.2.0/lib/libamdhip64.so.6 \
  /opt/rf-triton-3.4.0/bin/python hip.py 2>&1) | sed -e "s#$t#/home/user/kernels#g" \
  > "$cases/real-triton-libhip-path-versioned-name.log"
rm -rf "$t"
