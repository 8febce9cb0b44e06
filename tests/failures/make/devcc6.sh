#!/usr/bin/env bash
# Compiler messages of the r14 families (d9, devcc6), each made here by the real compiler:
#  clang++-22: a C++11 alignas after a GNU attribute ("'alignas' attribute cannot be applied
#    to types"), std::optional/std::nullopt without <optional> ("no template named 'optional'
#    in namespace 'std'"), the MSVC option /Zc:__cplusplus given to clang++ ("no such file or
#    directory"), -Wsign-compare made an error on an int/size_t comparison.
#  hipcc 5.2 (apt, HIPCC_VERBOSE=1): a flag probe that compiles /dev/null with an -mllvm option
#    this LLVM does not have, as AITER's hip_flag_checker does (a negative: the probe's "no" is
#    no failure).
# Cases go to rounds/d9/cases; a few seconds.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
t=$(mktemp -d)
cd "$t" || exit 1

printf '#define SHARED __attribute__((used))\nstruct D { float x; };\nvoid f() { static SHARED alignas(16) D smem[4]; (void)smem; }\n' > shared.cpp
clang++-22 -std=c++17 -c shared.cpp -o shared.o > "$cases/real-clang-alignas-after-gnu-attribute.log" 2>&1

printf '#include <vector>\nstd::optional<int> pick(const std::vector<int>& v) {\n  if (v.empty()) return std::nullopt;\n  return v[0];\n}\n' > topk.cpp
clang++-22 -std=c++20 -c topk.cpp -o topk.o > "$cases/real-clang-std-optional-without-include.log" 2>&1

printf 'int main() { return __cplusplus > 0 ? 0 : 1; }\n' > arch.cpp
clang++-22 /Zc:__cplusplus -c arch.cpp -o arch.o > "$cases/real-clang-msvc-zc-option.log" 2>&1

printf '#include <vector>\n#include <cstddef>\nint count(const std::vector<int>& sizes) {\n  int n = 0;\n  for (int i = 0; i < sizes.size(); ++i) n += sizes[i];\n  return n;\n}\n' > utils.cpp
clang++-22 -Wsign-compare -Werror -c utils.cpp -o utils.o > "$cases/real-clang-werror-sign-compare-size-t.log" 2>&1

HIP_PLATFORM=amd HIPCC_VERBOSE=1 hipcc -nogpulib --offload-arch=gfx1100 \
  -mllvm -amdgpu-no-such-option=1 -x hip -c /dev/null -o /dev/null \
  > "$cases/neg-hipcc-flag-probe-dev-null.log" 2>&1

for f in "$cases"/real-clang-*.log "$cases"/neg-hipcc-flag-probe-dev-null.log; do
  sed -i -e "s#$t#/home/user/src#g" "$f"
done
rm -rf "$t"
