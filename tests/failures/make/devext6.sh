#!/usr/bin/env bash
# Extension builds' own preconditions (d9, devext6): each message made here by the real upstream
# setup.py or torch.utils.cpp_extension (torch 2.13.0+cpu, Python 3), from the newest mirror
# snapshots in /work/.mirror (git archive: a tree without .git and without submodules, as a
# GitHub tarball is). Cases go to rounds/d9/cases; about a minute (the archives).
#  xformers: setup.py build_ext in a tree without third_party/cutlass (its CUTLASS check).
#  flash-attention (Dao-AILab): setup.py build_ext in such a tree (no .git: its assert on
#    csrc/cutlass; the CUDA branch, as this torch is not a ROCm build; the ROCm branch asserts
#    the same way on csrc/composable_kernel).
#  cpp_extension.load() of a one-file extension with ninja but no C++ compiler on PATH; and
#    setup.py's BuildExtension without ninja, which falls back and builds (a negative).
#  DeepSpeed: setup.py with DS_BUILD_OPS=1, then with DS_BUILD_CPU_ADAM=1, by a Python that
#    sees setuptools and no torch.
#  NVIDIA apex: setup.py build_ext (its top level asks nvcc under CUDA_HOME, None here); ROCm's
#    apex: the same (its top level splits torch.version.hip, None here).
#  vLLM (ROCm's fork, CMake 4 from /opt/rf-cmake4 as its CMakeLists needs 3.26): its configure
#    with VLLM_TARGET_DEVICE=rocm against this CPU torch; and its override_gpu_arches (the real
#    cmake/utils.cmake, HIP_SUPPORTED_ARCHS as its CMakeLists sets it) with
#    PYTORCH_ROCM_ARCH=gfx1036, run by a three-line project (cmake 3.25); its configure given
#    Python 3.13 where this machine has one.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
mirror=${MIRROR:-/work/.mirror}
py=$(python3 -c 'import sys; print(sys.executable)')
site=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
t=$(mktemp -d)
# The tree of a repository's newest snapshot, its large binary folders left out.
tree() {
  mkdir -p "$2"
  git -C "$mirror/$1/repo" ls-tree --name-only HEAD | grep -v -x -e assets -e blogs -e docs \
    | xargs git -C "$mirror/$1/repo" archive HEAD 2>/dev/null | tar -x -C "$2"
}
quiet() { grep -v -e 'wheel/bdist_wheel.py' -e '^  warn($'; }

tree facebookresearch+xformers "$t/xformers"
(cd "$t/xformers" && python3 setup.py build_ext 2>&1) | quiet \
  | sed -e "s#$t#/home/user/src#g" -e "s#$site#/home/user/venv/site-packages#g" > "$cases/real-xformers-cutlass-submodule-missing.log"

tree Dao-AILab+flash-attention "$t/flash-attention"
(cd "$t/flash-attention" && python3 setup.py build_ext 2>&1) | quiet \
  | sed -e "s#$t#/home/user/src#g" -e "s#$site#/home/user/venv/site-packages#g" > "$cases/real-flash-attention-tarball-cutlass-missing.log"

mkdir -p "$t/myext/bin"
for p in g++ c++ gcc cc as ld; do ln -s "$(command -v $p)" "$t/myext/bin/$p"; done
ln -s "$py" "$t/myext/bin/python3"
printf '#include <torch/extension.h>\nint f() { return 1; }\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("f", &f); }\n' \
  > "$t/myext/ext.cpp"
mkdir -p "$t/nocxx"; ln -s "$py" "$t/nocxx/python3"; ln -s "$(command -v ninja)" "$t/nocxx/ninja"
(cd "$t/myext" && TORCH_EXTENSIONS_DIR=$t/cache2 env PATH="$t/nocxx" python3 -c \
  'from torch.utils.cpp_extension import load; load(name="myext", sources=["ext.cpp"])' 2>&1) \
  | sed -e "s#$t#/home/user/src#g" -e "s#$site#/home/user/venv/site-packages#g" \
  > "$cases/real-cpp-extension-jit-no-cxx-compiler.log"
cat > "$t/myext/setup.py" <<'PY'
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension
setup(name="myext", ext_modules=[CppExtension("myext", ["ext.cpp"])],
      cmdclass={"build_ext": BuildExtension})
PY
(cd "$t/myext" && env PATH="$t/myext/bin" python3 setup.py build_ext 2>&1; echo "exit $?") | quiet \
  | sed -e "s#$t#/home/user/src#g" -e "s#$site#/home/user/venv/site-packages#g" \
  > "$cases/neg-cpp-extension-ninja-fallback-builds.log"

tree deepspeedai+DeepSpeed "$t/DeepSpeed"
# A Python without torch: -S (no site-packages) with only setuptools on PYTHONPATH, as pip's
# isolated build environment is (no venv module needed: Debian 12 ships it separately).
mkdir -p "$t/notorch"
for m in setuptools pkg_resources _distutils_hack; do ln -s "$site/$m" "$t/notorch/$m"; done
(cd "$t/DeepSpeed" && DS_BUILD_OPS=1 PYTHONPATH="$t/notorch" python3 -S setup.py build_ext 2>&1) \
  | sed -e "s#$t#/home/user/src#g" -e "s#$site#/home/user/venv/site-packages#g" > "$cases/real-deepspeed-build-ops-without-torch.log"
(cd "$t/DeepSpeed" && DS_BUILD_CPU_ADAM=1 PYTHONPATH="$t/notorch" python3 -S setup.py build_ext 2>&1) \
  | sed -e "s#$t#/home/user/src#g" > "$cases/real-deepspeed-build-cpu-adam-without-torch.log"
tree NVIDIA+apex "$t/apex"
(cd "$t/apex" && python3 setup.py build_ext 2>&1) | quiet \
  | sed -e "s#$t#/home/user/src#g" -e "s#$site#/home/user/venv/site-packages#g" \
  > "$cases/real-nvidia-apex-cpu-torch-nvcc-none.log"

tree ROCm+apex "$t/apex-rocm"
(cd "$t/apex-rocm" && python3 setup.py build_ext 2>&1) | quiet \
  | sed -e "s#$t/apex-rocm#/home/user/src/apex#g" -e "s#$site#/home/user/venv/site-packages#g" \
  > "$cases/real-rocm-apex-cpu-torch-hip-none.log"

mkdir -p "$t/vllm"
git -C "$mirror/ROCm+vllm/repo" archive HEAD CMakeLists.txt cmake csrc | tar -x -C "$t/vllm"
(cd "$t/vllm" && ${CMAKE4:-/opt/rf-cmake4/bin/cmake} -S . -B build -G Ninja \
  -DVLLM_PYTHON_EXECUTABLE="$py" -DVLLM_TARGET_DEVICE=rocm 2>&1) \
  | sed -e "s#$t#/home/user/src#g" -e "s#$site#/home/user/venv/site-packages#g" \
        -e "s#$py#/home/user/venv/bin/python3#g" > "$cases/real-vllm-cmake-cpu-torch-no-hip.log"
# The same configure with a Python vLLM's CMakeLists does not list (3.13, where one is found:
# pyenv's here; Debian 12 has none, so CI skips this case).
py13=
for c in $(command -v python3.13) /root/.pyenv/versions/3.13*/bin/python3.13; do
  [ -x "$c" ] && py13=$("$c" -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -n "$py13" ] && break
done
if [ -n "$py13" ]; then
  (cd "$t/vllm" && ${CMAKE4:-/opt/rf-cmake4/bin/cmake} -S . -B build13 -G Ninja \
    -DVLLM_PYTHON_EXECUTABLE="$py13" -DVLLM_TARGET_DEVICE=rocm 2>&1) \
    | sed -e "s#$t#/home/user/src#g" -e "s#$(dirname "$(dirname "$py13")")#/home/user/py313#g" \
    > "$cases/real-vllm-cmake-python313-unsupported.log"
fi
mkdir -p "$t/vllm-arch/cmake"
cp "$t/vllm/cmake/utils.cmake" "$t/vllm-arch/cmake/"
archs=$(sed -n 's/^set(HIP_SUPPORTED_ARCHS "\(.*\)")$/\1/p' "$t/vllm/CMakeLists.txt")
cat > "$t/vllm-arch/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(vllm_arch_check LANGUAGES NONE)
include(\${CMAKE_CURRENT_LIST_DIR}/cmake/utils.cmake)
set(HIP_SUPPORTED_ARCHS "$archs")
override_gpu_arches(VLLM_GPU_ARCHES HIP "\${HIP_SUPPORTED_ARCHS}")
CM
(cd "$t/vllm-arch" && PYTORCH_ROCM_ARCH=gfx1036 cmake -S . -B build 2>&1) \
  | sed -e "s#$t/vllm-arch#/home/user/src/vllm#g" > "$cases/real-vllm-rocm-arch-gfx1036-unsupported.log"
rm -rf "$t"
