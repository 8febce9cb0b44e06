#!/usr/bin/env bash
# Build-side message families of issue 40 (r17 after, devbt9), made with the real programs:
#  - cmake: add_subdirectory() into a vendored folder (third_party/psimd) that exists but is
#    empty, as an unchecked-out git submodule is: "The source directory … does not contain a
#    CMakeLists.txt file." (cmake: cmake-subdirectory-without-lists)
#  - g++-12 linking a program against the build's own shared library, which calls a function
#    template's specialization that no instance source defined: "ld: ../bin/libfa.so.0.1:
#    undefined reference to `void fa_vec_case<128, 2>(float*)'" (link:
#    undefined-reference, its shared-library template reading)
#  - clang++-22 on a header under hipcub/ naming a rocprim:: template that the (stand-in)
#    rocprim headers lack: "no template named 'radix_key_codec' in namespace 'rocprim'"
#    (rocm-install: rocprim-name-missing; the headers are tiny stand-ins, the message is
#    clang's own)
#  - python3 in a venv without setuptools, with an empty setuptools folder in site-packages:
#    "ImportError: cannot import name 'setup' from 'setuptools' (unknown location)"
#    (python-packaging: import-from-namespace-stub)
# Needs cmake, g++-12, clang++-22, python3. Writes rounds/d10/cases/real-*.log (the .toml
# answers are committed beside them). A few seconds.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d10/cases
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
scrub() { sed -e "s#$t#/home/user/proj#g"; }

mkdir -p "$t/cm/third_party/psimd"
printf 'cmake_minimum_required(VERSION 3.10)\nproject(x NONE)\nadd_subdirectory(third_party/psimd)\n' \
  > "$t/cm/CMakeLists.txt"
(cd "$t/cm" && cmake -S . -B build 2>&1) | sed -e "s#$t/cm#/home/user/proj#g" \
  > "$cases/real-cmake-vendored-subdirectory-empty.log"

mkdir -p "$t/ld/bin" "$t/ld/app"
printf 'template <int D, int K> void fa_vec_case(float* x);\n' > "$t/ld/fa.h"
printf '#include "fa.h"\ntemplate <int D, int K> void fa_vec_case(float* x) { x[0] = D + K; }\ntemplate void fa_vec_case<64, 1>(float*);\n' \
  > "$t/ld/inst.cpp"
printf '#include "fa.h"\nvoid run(float* x, int k) { if (k) fa_vec_case<64, 1>(x); else fa_vec_case<128, 2>(x); }\n' \
  > "$t/ld/lib.cpp"
printf 'void run(float*, int);\nint main() { float x[1]; run(x, 1); return 0; }\n' > "$t/ld/main.cpp"
(cd "$t/ld" && g++-12 -shared -fPIC -o bin/libfa.so.0.1 lib.cpp inst.cpp) || exit 1
(cd "$t/ld/app" && g++-12 -o ../bin/app ../main.cpp ../bin/libfa.so.0.1 2>&1) | scrub \
  > "$cases/real-ld-shared-library-template-instance-undefined.log"

mkdir -p "$t/rp/rocprim" "$t/rp/hipcub/backend/rocprim"
printf 'namespace rocprim { template <class T> struct radix_key_encoder {}; }\n' \
  > "$t/rp/rocprim/rocprim.hpp"
printf '#include <rocprim/rocprim.hpp>\ntemplate <class T> struct codec_user {\n    using key_codec = rocprim::radix_key_codec<T>;\n};\n' \
  > "$t/rp/hipcub/backend/rocprim/util_type.hpp"
printf '#include <hipcub/backend/rocprim/util_type.hpp>\nint main() { return 0; }\n' > "$t/rp/use.cpp"
(cd "$t/rp" && clang++-22 -fsyntax-only -I. use.cpp 2>&1) | scrub \
  > "$cases/real-clang-hipcub-rocprim-template-missing.log"

python3 -m venv --without-pip "$t/venv"
site=$("$t/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$site/setuptools"
(cd "$t" && "$t/venv/bin/python" -c 'from setuptools import setup' 2>&1) | scrub \
  > "$cases/real-python-setuptools-namespace-stub.log"
