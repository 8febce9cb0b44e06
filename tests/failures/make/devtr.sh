#!/usr/bin/env bash
# devtr's d9 cases: TheRock's own CMake modules and scripts (the commit below, from the local
# mirror of ROCm/TheRock) run here by cmake 3.25 / python3, in tiny projects that call them
# the way a user's configure does.
#  - real-therock-amdgpu-family-unknown: THEROCK_AMDGPU_FAMILIES given a family name TheRock
#    does not define (gfx110x-all, lower-case x) -> therock_validate_amdgpu_targets.
#  - real-therock-amdgpu-target-unknown: THEROCK_AMDGPU_TARGETS given a family name (gfx110X-all).
#  - real-therock-no-amdgpu-target: neither set.
#  - real-therock-subproject-host-program-missing: a sub-project that requires a host program (libhipcxx: lit, as
#    math-libs/CMakeLists.txt declares; therock_cmake_subproject_require_host_program) the PATH lacks.
#  - real-therock-subproject-dep-not-declared: a sub-project's find_package(hip) of a package
#    the super-project provides but the sub-project did not declare (the dependency provider).
#  - real-therock-in-source-build: TheRock's top-level CMakeLists configured in its own tree.
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
