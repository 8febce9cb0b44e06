#!/usr/bin/env bash
# devtr's d9 cases: TheRock's own CMake modules and scripts (the commit below, from the local
# mirror of ROCm/TheRock) run here by cmake 3.25 / python3, in tiny projects that call them
# the way a user's configure does.
#  - real-therock-amdgpu-family-unknown: THEROCK_AMDGPU_FAMILIES given a family name TheRock
#    does not define (gfx110x-all, lower-case x) -> therock_validate_amdgpu_targets.
#  - real-therock-amdgpu-target-unknown: THEROCK_AMDGPU_TARGETS given a family name (gfx110X-all).
#  - real-therock-no-amdgpu-target: neither set.
#  - real-therock-dist-bundle-name-needed: two targets (gfx1100;gfx1201) and no bundle name.
#  - real-therock-subproject-host-program-missing: a sub-project that requires a host program (libhipcxx: lit, as
#    math-libs/CMakeLists.txt declares; therock_cmake_subproject_require_host_program) the PATH lacks.
#  - real-therock-subproject-dep-not-declared: a sub-project's find_package(hip) of a package
#    the super-project provides but the sub-project did not declare (the dependency provider).
#  - real-therock-in-source-build: TheRock's top-level CMakeLists configured in its own tree.
#  - real-therock-sources-not-fetched: TheRock's whole top-level configure in a checkout whose
#    sub-project sources were never fetched (git archive of the commit: no submodules).
#  - real-therock-sysdeps-patchelf-missing: the same after a stand-in HIP VERSION file is put
#    where fetch_sources.py would check it out, with PATH=/usr/bin:/bin and no patchelf there
#    (bundled sysdeps are on by default).
#  - real-therock-sysdeps-meson-missing: the same with a stand-in patchelf on PATH, no meson.
#  - real-therock-external-source-missing: the same top-level configure asked to build rocgdb
#    from sources of one's own (-DTHEROCK_USE_EXTERNAL_ROCGDB=ON) at a folder that is not there.
#  - real-therock-topology-tomli-missing: the same configure with Python3_EXECUTABLE a Python
#    3.10 without tomli (made only where one exists: none on Debian 12; the committed log came
#    from pyenv's 3.10.13).
#  - real-therock-configure-lit-missing: the same configure (Ninja) with stand-in patchelf and
#    meson: it goes through the whole super-project and stops at libhipcxx's host program lit.
#  - real-therock-shared-python-not-found: the same configure given
#    THEROCK_SHARED_PYTHON_EXECUTABLES=python3.12 (a name, not a path) for rocGDB's Python.
#  - real-therock-build-sources-not-fetched: with a stand-in lit too the configure ends, and
#    ninja stops at the first sub-project (amd-llvm) whose sources were never fetched.
#  - real-rocm-sdk-unknown-library: TheRock's rocm_sdk package (its template, as the wheel
#    ships it) preloading for torch the way build_prod_wheels.py's _rocm_init does, asked for a
#    library its table does not list (rocshmem: a torch built against a newer rocm).
#  - real-rocm-sdk-library-file-missing: the same, with rocm-sdk-core's package present but
#    its lib/ without libamdhip64.so (a stand-in package folder).
#  - real-rocm-sdk-preload-env-bad: ROCM_SDK_PRELOAD_LIBRARIES naming a library it lacks.
#  - real-rocm-sdk-init-no-devel-tarball: `python -m rocm_sdk init` with a rocm-sdk-devel
#    distribution pip-installed here whose rocm_sdk_devel holds no _devel.tar(.xz) (a wheel
#    made here with only its __init__.py).
#  - real-hipcc-unknown-platform: Debian 12's hipcc (5.2, Perl) with HIP_PLATFORM=rocm.
#  - real-hipcc-picked-nvcc: the same hipcc with HIP_PLATFORM unset, no clang++ on PATH and a
#    CUDA nvcc on it: hipcc picks the nvidia platform and nvcc refuses --offload-arch=gfx1100
#    (made only where an nvcc exists; the committed log came from CUDA 13.0's nvcc).
#  - real-pip-rocm-family-package-missing: pip resolving rocm[libraries] from a local index
#    (stand-in wheels named as TheRock's _dist_info names them: rocm, rocm-sdk-core) that lacks
#    rocm-sdk-libraries-gfx110X-all, as an index of another family does.
#  - real-therock-artifacts-release-not-nightly: TheRock's install_rocm_from_artifacts.py
#    given --release 7.10.0 (a plain version); made only where boto3, which it imports, is
#    installed.
# Writes rounds/d9/cases/<id>.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
therock=/work/.mirror/ROCm+TheRock/repo
rev=89553ce3746eda74ade42557470d25e37c91b6f0
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/rock"
git -C "$therock" archive "$rev" | tar -x -C "$t/rock"
run() {  # run <case id> <command...>: the output, the exit code, paths made generic
  local id=$1; shift
  (cd "$t" && LANG=C "$@" 2>&1; echo "exit code $?") | sed -e "s#$t/rock#/home/user/TheRock#g" \
    -e "s#$t#/home/user/build#g" > "$cases/$id.log"
}
mkdir -p "$t/targets"
cat > "$t/targets/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(targets NONE)
list(APPEND CMAKE_MODULE_PATH "$t/rock/cmake")
include(therock_amdgpu_targets)
therock_validate_amdgpu_targets()
CM
run real-therock-amdgpu-family-unknown cmake -S targets -B b1 -DTHEROCK_AMDGPU_FAMILIES=gfx110x-all
run real-therock-amdgpu-target-unknown cmake -S targets -B b2 -DTHEROCK_AMDGPU_TARGETS=gfx110X-all
run real-therock-no-amdgpu-target cmake -S targets -B b3
run real-therock-dist-bundle-name-needed cmake -S targets -B b3b '-DTHEROCK_AMDGPU_TARGETS=gfx1100;gfx1201'
mkdir -p "$t/prog"
cat > "$t/prog/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(prog NONE)
list(APPEND CMAKE_MODULE_PATH "$t/rock/cmake")
include(therock_subproject)
# what therock_cmake_subproject_declare marks a sub-project's target with
add_custom_target(libhipcxx)
set_target_properties(libhipcxx PROPERTIES THEROCK_SUBPROJECT cmake)
therock_cmake_subproject_require_host_program(libhipcxx lit)
CM
run real-therock-subproject-host-program-missing env PATH=/usr/bin:/bin cmake -S prog -B b4
mkdir -p "$t/sub"
cat > "$t/sub/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(rocprim CXX)
find_package(hip CONFIG REQUIRED)
CM
run real-therock-subproject-dep-not-declared cmake -S sub -B b5 \
  -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES="$t/rock/cmake/therock_subproject_dep_provider.cmake" \
  -DTHEROCK_USE_SAFE_DEPENDENCY_PROVIDER=ON -DTHEROCK_PROVIDED_PACKAGES=amd_comgr \
  "-DTHEROCK_STRICT_PROVIDED_PACKAGES=amd_comgr;hip;rocm-core"
run real-therock-in-source-build cmake -S rock -B rock
rm -rf "$t/rock/CMakeCache.txt" "$t/rock/CMakeFiles"
run real-therock-sources-not-fetched cmake -S rock -B b6
for py in /usr/bin/python3.10 "$HOME"/.pyenv/versions/3.10*/bin/python3; do
  if [ -x "$py" ] && ! "$py" -c 'import tomli' 2>/dev/null; then
    run real-therock-topology-tomli-missing cmake -S rock -B b10 -DPython3_EXECUTABLE="$py" \
      -DTHEROCK_AMDGPU_FAMILIES=gfx110X-all
    break
  fi
done
run real-therock-external-source-missing cmake -S rock -B b9 -DTHEROCK_USE_EXTERNAL_ROCGDB=ON \
  -DTHEROCK_ROCGDB_SOURCE_DIR=../rocgdb
mkdir -p "$t/rock/rocm-systems/projects/hip" "$t/bin"
printf '7\n2\n0\n' > "$t/rock/rocm-systems/projects/hip/VERSION"
run real-therock-sysdeps-patchelf-missing env PATH=/usr/bin:/bin cmake -S rock -B b7 \
  -DTHEROCK_AMDGPU_FAMILIES=gfx110X-all
printf '#!/bin/sh\nexit 0\n' > "$t/bin/patchelf"; chmod +x "$t/bin/patchelf"
run real-therock-sysdeps-meson-missing env PATH="$t/bin:/usr/bin:/bin" cmake -S rock -B b8 \
  -DTHEROCK_AMDGPU_FAMILIES=gfx110X-all
cp "$t/bin/patchelf" "$t/bin/meson"
run real-therock-configure-lit-missing env PATH="$t/bin:/usr/bin:/bin" cmake -S rock -B b11 -GNinja \
  -DTHEROCK_AMDGPU_FAMILIES=gfx110X-all
cp "$t/bin/patchelf" "$t/bin/lit"
run real-therock-shared-python-not-found env PATH="$t/bin:/usr/bin:/bin" cmake -S rock -B b12 \
  -GNinja -DTHEROCK_AMDGPU_FAMILIES=gfx110X-all -DTHEROCK_SHARED_PYTHON_EXECUTABLES=python3.12
(cd "$t" && PATH="$t/bin:/usr/bin:/bin" cmake -S rock -B b11 >/dev/null 2>&1)
run real-therock-build-sources-not-fetched env PATH="$t/bin:/usr/bin:/bin" ninja -C b11

# TheRock's pip SDK: the template package on PYTHONPATH, stand-in backend packages beside it
mkdir -p "$t/site/_rocm_sdk_core_DEFAULT/lib"
cp -r "$t/rock/build_tools/packaging/python/templates/rocm/src/rocm_sdk" "$t/site/"
touch "$t/site/_rocm_sdk_core_DEFAULT/__init__.py"
echo 'int hipInit(unsigned flags) { return (int)flags; }' > "$t/hip.c"
init='import rocm_sdk; rocm_sdk.initialize_process(preload_shortnames=["amd_comgr", "amdhip64"])'
run real-rocm-sdk-library-file-missing env PYTHONPATH="$t/site" python3 -c "$init"
gcc -shared -fPIC -o "$t/site/_rocm_sdk_core_DEFAULT/lib/libamdhip64.so" "$t/hip.c"
cp "$t/site/_rocm_sdk_core_DEFAULT/lib/libamdhip64.so" "$t/site/_rocm_sdk_core_DEFAULT/lib/libamd_comgr.so"
init='import rocm_sdk; rocm_sdk.initialize_process(preload_shortnames=["amd_comgr", "amdhip64", "rocshmem"])'
run real-rocm-sdk-unknown-library env PYTHONPATH="$t/site" python3 -c "$init"
run real-rocm-sdk-preload-env-bad env PYTHONPATH="$t/site" ROCM_SDK_PRELOAD_LIBRARIES=amdhip64,rocshmem \
  python3 -c 'import rocm_sdk; rocm_sdk.initialize_process()'
mkdir -p "$t/devel/rocm_sdk_devel"
touch "$t/devel/rocm_sdk_devel/__init__.py"
printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'\
'[project]\nname = "rocm-sdk-devel"\nversion = "7.10.0"\n[tool.setuptools]\npackages = ["rocm_sdk_devel"]\n' \
  > "$t/devel/pyproject.toml"
python3 -m pip wheel -q --no-deps --no-build-isolation -w "$t/whl" "$t/devel" >/dev/null 2>&1
python3 -m pip install -q --no-deps --no-index --target "$t/site" "$t"/whl/rocm_sdk_devel-*.whl \
  >/dev/null 2>&1
run real-rocm-sdk-init-no-devel-tarball env PYTHONPATH="$t/site" python3 -m rocm_sdk init

# hipcc's platform: an unknown HIP_PLATFORM, and nvcc picked where no clang++ is on PATH
echo '__global__ void k(int *p) { *p = 1; }' > "$t/k.hip"
run real-hipcc-unknown-platform env HIP_PLATFORM=rocm hipcc --offload-arch=gfx1100 -c k.hip -o k.o
if nvcc=$(command -v nvcc); then
  run real-hipcc-picked-nvcc env -u HIP_PLATFORM -u HIP_CLANG_PATH PATH="$(dirname "$nvcc"):/usr/bin:/bin" \
    hipcc --offload-arch=gfx1100 -c k.hip -o k.o
fi

# pip: an index without the target family's libraries package
for pkg in rocm rocm-sdk-core; do
  mkdir -p "$t/pkgs/$pkg"
  extra=""; [ "$pkg" = rocm ] && extra='dependencies = ["rocm-sdk-core==7.10.0"]
[project.optional-dependencies]
libraries = ["rocm-sdk-libraries-gfx110X-all==7.10.0"]'
  printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "%s"\nversion = "7.10.0"\n%s\n[tool.setuptools]\npy-modules = []\n' \
    "$pkg" "$extra" > "$t/pkgs/$pkg/pyproject.toml"
  python3 -m pip wheel -q --no-deps --no-build-isolation -w "$t/index" "$t/pkgs/$pkg" >/dev/null 2>&1
done
run real-pip-rocm-family-package-missing env -u PIP_FIND_LINKS PIP_CONFIG_FILE=/dev/null \
  python3 -m pip install --dry-run --no-index --find-links index "rocm[libraries]"

# TheRock's artifact installer with a release that is not a nightly or dev version
if python3 -c 'import boto3' 2>/dev/null; then
  run real-therock-artifacts-release-not-nightly python3 rock/build_tools/install_rocm_from_artifacts.py \
    --release 7.10.0 --amdgpu-family gfx110X-all --output-dir rocm
fi
