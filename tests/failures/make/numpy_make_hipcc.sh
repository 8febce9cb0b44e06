#!/usr/bin/env bash
# Two message families of issue 40 (r17 session), made with the real programs:
#  - torch 2.13 with NumPy unimportable (sys.modules['numpy'] = None, as a Python without
#    NumPy installed behaves): torch's "UserWarning: Failed to initialize NumPy: …" then
#    "RuntimeError: Numpy is not available" at the first NumPy conversion
#    (python-packaging: torch-numpy-unavailable)
#  - GNU make running a recipe whose first word is hipcc, with no hipcc on PATH: make runs the
#    program itself (no shell) and prints "make: hipcc: No such file or directory"
#    (rocm-install: hip-compiler-not-found)
#  - torch.utils.cpp_extension (a CPU torch here: its CUDA path) with TORCH_CUDA_ARCH_LIST=gfx1100:
#    "ValueError: Unknown CUDA arch (gfx1100) or GPU not supported" (rocm-disabled:
#    cpp-extension-cuda-arch-gfx)
# Needs python3 with torch, make. Writes rounds/d10/cases/real-*.log (the .toml answers are
# committed beside them). About ten seconds (torch's import).
set -u
for tool in python3 make; do
  command -v "$tool" >/dev/null || { echo "numpy_make_hipcc.sh: needs $tool" >&2; exit 2; }
done
python3 -c "import torch" 2>/dev/null || { echo "numpy_make_hipcc.sh: needs torch" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d10/cases
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

(cd "$t" && python3 -c "
import sys
sys.modules['numpy'] = None
import torch
torch.zeros(2).numpy()" 2>&1) | sed -e "s#$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')#/usr/lib/python3/site-packages#g" \
  > "$cases/real-torch-numpy-unavailable.log"

mkdir -p "$t/mk"
printf 'all:\n\thipcc -c kernel.hip -o kernel.o\n' > "$t/mk/Makefile"
mkdir -p "$t/nobin"; make=$(command -v make)
(cd "$t/mk" && PATH=$t/nobin "$make" 2>&1) > "$cases/real-make-hipcc-missing.log"

# torch's cpp_extension CUDA path given an AMD target (a non-ROCm torch building an extension)
(cd "$t" && TORCH_CUDA_ARCH_LIST=gfx1100 python3 -c "
from torch.utils.cpp_extension import _get_cuda_arch_flags
_get_cuda_arch_flags()" 2>&1) | sed -e "s#$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')#/usr/lib/python3/site-packages#g" \
  > "$cases/real-cpp-extension-cuda-arch-gfx.log"
