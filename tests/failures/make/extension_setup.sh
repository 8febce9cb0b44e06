#!/usr/bin/env bash
# Extension builds and TheRock's pip ROCm SDK: each message made by the real upstream code on
# this machine (torch 2.13.0+cpu, Python 3), never typed by hand. Cases go to rounds/d5/cases.
#  flash-attention (Dao-AILab/flash-attention, newest mirror snapshot): setup.py's own
#    validate_and_update_archs, copied out of setup.py verbatim with the lines of setup.py's
#    ROCm/CK branch that read GPU_ARCHS and call it, run with GPU_ARCHS=gfx1030; and that
#    branch's own detection lines with GPU_ARCHS unset on this GPU-less host.
#  torch.utils.cpp_extension: _join_rocm_home, the call a HIP extension's build makes for
#    <ROCM_HOME>/bin/hipcc and its include/lib folders, on this host where torch found no ROCm.
#  rocm_sdk (ROCm/TheRock build_tools/packaging/python/templates/rocm/src/rocm_sdk, newest
#    mirror snapshot): its _dist_info.py completed as build_tools/_therock_utils/py_packaging.py
#    completes it (version, DEFAULT_TARGET_FAMILY, AVAILABLE_TARGET_FAMILIES.append lines), then
#    `python -m rocm_sdk init` (the `rocm-sdk init` entry point) without the rocm[devel] package,
#    rocm_sdk.preload_libraries with ROCM_SDK_TARGET_FAMILY naming a target it lacks, and
#    preload_libraries for the default family without its rocm[libraries] package installed.
#  xformers: a wheel built for another torch (see the end of the script).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d5/cases
fa=/work/.mirror/Dao-AILab+flash-attention/repo
rock=/work/.mirror/ROCm+TheRock/repo
site=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
pyver=$(python3 -c 'import sys; print(f"python{sys.version_info[0]}.{sys.version_info[1]}")')
t=$(mktemp -d)
mkdir -p "$t/flash-attention"
git -C "$fa" show HEAD:setup.py > "$t/setup.full.py"
python3 - "$t/setup.full.py" "$t/flash-attention/setup.py" <<'PY'
import ast, sys
src = open(sys.argv[1]).read()
fn = next(n for n in ast.parse(src).body
          if isinstance(n, ast.FunctionDef) and n.name == "validate_and_update_archs")
body = "\n".join(src.splitlines()[fn.lineno - 1:fn.end_lineno])
with open(sys.argv[2], "w") as out:
    out.write("import os\n\n\n" + body + "\n\n\n"
              'archs = [arch.lower() for arch in os.getenv("GPU_ARCHS", "native").split(";")]\n'
              "validate_and_update_archs(archs)\n")
PY
(cd "$t/flash-attention" && GPU_ARCHS=gfx1030 python3 setup.py 2>&1) \
  | sed -e "s#$t#/home/user/src#g" > "$cases/flash-attention-invalid-archs-gfx1030-reproduced.log"
# The same branch's target detection, GPU_ARCHS unset, on this host without a GPU: the lines of
# setup.py from its GPU_ARCHS read to its detected_arch, dedented, run after the function.
mkdir -p "$t/flash-attention-native"
python3 - "$t/setup.full.py" "$t/flash-attention-native/setup.py" <<'PY'
import ast, sys, textwrap
src = open(sys.argv[1]).read()
lines = src.splitlines()
fn = next(n for n in ast.parse(src).body
          if isinstance(n, ast.FunctionDef) and n.name == "validate_and_update_archs")
start = next(i for i, l in enumerate(lines) if "archs = [arch.lower() for arch in" in l)
end = next(i for i, l in enumerate(lines) if i > start and "kernel_targets = [detected_arch" in l)
with open(sys.argv[2], "w") as out:
    out.write("import os\n\nimport torch\n\n\n" + "\n".join(lines[fn.lineno - 1:fn.end_lineno])
              + "\n\n\n" + textwrap.dedent("\n".join(lines[start:end + 1])) + "\n")
PY
(cd "$t/flash-attention-native" && env -u GPU_ARCHS python3 setup.py 2>&1) \
  | sed -e "s#$t/flash-attention-native#/home/user/src/flash-attention#g" \
  > "$cases/flash-attention-gpu-archs-unset-no-gpu-reproduced.log"

python3 -c "from torch.utils.cpp_extension import _join_rocm_home; _join_rocm_home('bin', 'hipcc')" 2>&1 \
  | sed -e "s#$site#/home/user/venv/lib/$pyver/site-packages#g" \
  > "$cases/cpp-extension-rocm-home-unset-reproduced.log"

mkdir -p "$t/sdk"
git -C "$rock" archive HEAD build_tools/packaging/python/templates/rocm/src/rocm_sdk | tar -x -C "$t/sdk"
pkg=$t/sdk/build_tools/packaging/python/templates/rocm/src
cat >> "$pkg/rocm_sdk/_dist_info.py" <<'PY'
__version__ = '7.11.0'
DEFAULT_TARGET_FAMILY = 'gfx110X-all'
AVAILABLE_TARGET_FAMILIES.append('gfx110X-all')
AVAILABLE_TARGET_FAMILIES.append('gfx1151')
AVAILABLE_TARGET_FAMILIES.append('gfx120X-all')
AVAILABLE_TARGET_FAMILIES.append('gfx94X-dcgpu')
AVAILABLE_TARGET_FAMILIES.append('gfx950-dcgpu')
PY
(cd "$t" && echo '$ rocm-sdk init' && PYTHONPATH=$pkg python3 -m rocm_sdk init 2>&1) \
  > "$cases/rocm-sdk-init-devel-missing-reproduced.log"
(cd "$t" && PYTHONPATH=$pkg ROCM_SDK_TARGET_FAMILY=gfx1036 python3 -c \
  "import rocm_sdk; rocm_sdk.preload_libraries('hipblas')" 2>&1) \
  | sed -e "s#$pkg#/home/user/venv/lib/$pyver/site-packages#g" \
  > "$cases/rocm-sdk-target-family-gfx1036-unavailable-reproduced.log"
(cd "$t" && PYTHONPATH=$pkg python3 -c \
  "import rocm_sdk; rocm_sdk.preload_libraries('hipblas')" 2>&1) \
  | sed -e "s#$pkg#/home/user/venv/lib/$pyver/site-packages#g" \
  > "$cases/rocm-sdk-libraries-missing-gfx110x-reproduced.log"
# xformers: PyPI's 0.0.28.post3 wheel (built for torch 2.5.1+cu121), fetched once with
# `pip download --no-deps` into $XFORMERS_WHEEL_DIR (default /tmp/xfwheel), in a venv over this
# torch; its first attention call.
xf=${XFORMERS_WHEEL_DIR:-/tmp/xfwheel}
if ls "$xf"/xformers-0.0.28.post3-*.whl >/dev/null 2>&1; then
  python3 -m venv --system-site-packages "$t/xfvenv"
  "$t/xfvenv/bin/pip" install -q --no-deps "$xf"/xformers-0.0.28.post3-*.whl
  (cd "$t" && "$t/xfvenv/bin/python" -c "import torch, xformers.ops as xops
q = torch.randn(1, 8, 2, 16)
xops.memory_efficient_attention(q, q, q)" 2>&1) \
    | sed -e "s#$t/xfvenv#/home/user/venv#g" > "$cases/xformers-built-for-other-torch-reproduced.log"
else
  echo "no xformers wheel in $xf: pip download --no-deps -d $xf xformers==0.0.28.post3" >&2
fi
rm -rf "$t"
