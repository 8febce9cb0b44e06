#!/usr/bin/env bash
# import: the glibc 2.36 loader refusing an installed stand-in "torch" package in a Python 3.11
# site-packages, run as `python3 -c "import torch"` (the kit's verify step).
#  real-import-missing-dependency: torch/__init__.py loads lib/libtorch_global_deps.so with
#    ctypes.CDLL(RTLD_GLOBAL); that library has DT_NEEDED libamdhip64.so.6, which was removed.
#  real-import-undefined-symbol: torch/_C (a real CPython extension module) was linked against a
#    libamdhip64.so.6 that defines hipGetDevicePropertiesR0600; the one found at run time is an
#    older build without it.
# Every library is built here with g++/gcc 12; the site-packages path is rewritten to
# /home/user/rocm-venv, the interpreter's prefix to /usr.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../cases
export HIP_PLATFORM=amd
py=$(command -v python3)
inc=$("$py" -c "import sysconfig;print(sysconfig.get_paths()['include'])")
prefix=$("$py" -c "import sys;print(sys.base_prefix)")  # the stdlib path is rewritten to /usr
ext=$("$py" -c "import sysconfig;print(sysconfig.get_config_var('EXT_SUFFIX'))")
t=$(mktemp -d)
sp=$t/lib/python3.11/site-packages
mkdir -p "$sp/torch/lib" "$t/rocm/lib" "$t/src"
cat > "$sp/torch/__init__.py" <<'PY'
import ctypes
import os


def _load_global_deps():
    here = os.path.dirname(os.path.abspath(__file__))
    lib_path = os.path.join(here, "lib", "libtorch_global_deps.so")
    ctypes.CDLL(lib_path, mode=ctypes.RTLD_GLOBAL)


_load_global_deps()
from torch._C import *  # noqa: F403
PY
# libamdhip64.so.6 with and without the symbol
cat > "$t/src/hip_new.c" <<'C'
int hipGetDevicePropertiesR0600(void *props, int device) { (void)props; return device; }
int hipGetDeviceCount(int *n) { *n = 0; return 0; }
C
cat > "$t/src/hip_old.c" <<'C'
int hipGetDeviceCount(int *n) { *n = 0; return 0; }
C
gcc -shared -fPIC -Wl,-soname,libamdhip64.so.6 -o "$t/rocm/lib/libamdhip64.so.6" "$t/src/hip_new.c"
ln -s libamdhip64.so.6 "$t/rocm/lib/libamdhip64.so"
echo 'int torch_global_deps_probe(void) { return 0; }' > "$t/src/deps.c"
gcc -shared -fPIC -o "$sp/torch/lib/libtorch_global_deps.so" "$t/src/deps.c" \
  -Wl,--no-as-needed -L"$t/rocm/lib" -lamdhip64
cat > "$t/src/_C.c" <<'C'
#define PY_SSIZE_T_CLEAN
#include <Python.h>
int hipGetDevicePropertiesR0600(void *props, int device);
static PyObject *device_name(PyObject *self, PyObject *args) {
  char buf[1024];
  hipGetDevicePropertiesR0600(buf, 0);
  return PyUnicode_FromString("gfx1100");
}
static PyMethodDef methods[] = {{"_device_name", device_name, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "torch._C", NULL, -1, methods};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&mod); }
C
gcc -shared -fPIC -I"$inc" -o "$sp/torch/_C$ext" "$t/src/_C.c" -L"$t/rocm/lib" -lamdhip64 \
  -Wl,-rpath,"$t/rocm/lib"
run() { (cd "$t" && PYTHONPATH="$sp" "$py" -c "import torch" 2>&1) | sed -e "s#$t#/home/user/rocm-venv#g; s#$prefix#/usr#g"; }
# 1: the dependency is gone
mv "$t/rocm/lib/libamdhip64.so.6" "$t/libamdhip64.so.6.saved"
run > "$cases/real-import-missing-dependency.log"
# 2: an older libamdhip64.so.6 without the symbol
gcc -shared -fPIC -Wl,-soname,libamdhip64.so.6 -o "$t/rocm/lib/libamdhip64.so.6" "$t/src/hip_old.c"
LD_LIBRARY_PATH="$t/rocm/lib" run > "$cases/real-import-undefined-symbol.log"
rm -rf "$t"
