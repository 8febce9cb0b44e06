#!/usr/bin/env bash
# Windows toolchain message families of issue 40 (d9, devwin), made with the real programs
# (clang-cl-22, lld-link-22 and llvm's COFF tools stand in for MSVC, which is not here):
#  - lld-link-22 given python311.lib that is not there (link: coff-cannot-open-file)
#  - lld-link-22 on a clang-cl-22 object that asks for the MSVC runtime (libcmt.lib,
#    oldnames.lib) with no LIB environment (link: coff-cannot-open-file)
#  - clang-22's driver for x86_64-pc-windows-msvc given -lm: lld-link looks for m.lib
#    (link: coff-cannot-open-file)
#  - lld-link-22 given a .def of 65,536 exports (link: coff-export-limit)
#  - lld-link-22 given a DLL where the import library belongs, and an ELF object made by gcc
#    (link: coff-bad-input)
#  - lld-link-22 /machine:x64 given an x86 object (link: coff-machine-type-conflict)
#  - clang-cl-22 on <yvals_core.h> of microsoft/STL@2a62bf7b with __clang_major__ set below
#    the release that header requires (host-compiler: msvc-stl-compiler-too-old); its
#    <vcruntime.h> (Visual C++'s, not in that repository) is an empty stand-in
#  - clang-cl-22 with `#define noexcept` before that header's xkeycheck.h
#    (host-compiler: msvc-keyword-macro)
#  - clang-cl-22 on <vector> with no Visual C++ headers installed or on INCLUDE
#    (host-compiler: msvc-toolset-header-missing)
#  - clang-cl-22 linking through link.exe with no Visual Studio to find it
#    (host-compiler: clang-no-visual-studio)
#  - clang-cl-22 on a source that includes <unistd.h> (host-compiler: windows-posix-header)
#  - clang-cl-22 given GCC's -fPIC: a warning only, the compile goes on (claims nothing)
# Writes rounds/d9/cases/real-*.log (the .toml answers are committed beside them).
# Needs the STL mirror at /work/.mirror/microsoft+STL/repo.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
stl=2a62bf7b4079f0a3e33ec80d7daf9ea968805b12
t=$(mktemp -d)
cl() { clang-cl-22 --target=x86_64-pc-windows-msvc "$@"; }
printf 'int helper(void);\nint main(void) { return helper(); }\n' > "$t/main.c"
printf 'int helper(void) { return 0; }\n' > "$t/helper.c"
(cd "$t" && cl /c /Zl main.c /Fomain.obj && cl /c /Zl helper.c /Fohelper.obj \
  && lld-link-22 /dll /noentry /out:_C.cp311-win_amd64.pyd main.obj helper.obj python311.lib \
  2>&1) | sed 's/^lld-link-22:/lld-link:/' > "$cases/real-lld-link-python-lib-missing.log"
(cd "$t" && cl /c main.c /Fomain_crt.obj && lld-link-22 /out:main.exe main_crt.obj helper.obj \
  2>&1) | sed 's/^lld-link-22:/lld-link:/' > "$cases/real-lld-link-msvc-runtime-libs-missing.log"
(cd "$t" && clang-cl-22 --target=i686-pc-windows-msvc /c /Zl helper.c /Fohelper32.obj \
  && lld-link-22 /machine:x64 /entry:main /subsystem:console main.obj helper32.obj \
  /out:main.exe 2>&1) | sed 's/^lld-link-22:/lld-link:/' \
  > "$cases/real-lld-link-machine-type-x86.log"
(cd "$t" && clang-22 --target=x86_64-pc-windows-msvc -fuse-ld=lld -nostdlib -Wl,/entry:main \
  main.c helper.c -lm -o main.exe 2>&1) | sed 's/^clang-22:/clang:/' \
  > "$cases/real-lld-link-libm-on-windows.log"
printf 'void f(void) {}\n' > "$t/f.c"
{ echo EXPORTS; for i in $(seq 0 65535); do echo "e$i=f"; done; } > "$t/torch_hip.def"
(cd "$t" && cl /c /Zl f.c /Fof.obj && lld-link-22 /dll /noentry /def:torch_hip.def f.obj \
  /out:torch_hip.dll 2>&1) | sed 's/^lld-link-22:/lld-link:/' \
  > "$cases/real-lld-link-too-many-exports.log"
(cd "$t" && lld-link-22 /dll /noentry /out:amdhip64.dll f.obj > /dev/null 2>&1 \
  && lld-link-22 /entry:main /subsystem:console main.obj amdhip64.dll /out:main.exe 2>&1) \
  | sed 's/^lld-link-22:/lld-link:/' > "$cases/real-lld-link-dll-instead-of-import-library.log"
(cd "$t" && gcc -c helper.c -o helper.o && lld-link-22 /entry:main /subsystem:console main.obj \
  helper.o /out:main.exe 2>&1) | sed 's/^lld-link-22:/lld-link:/' \
  > "$cases/real-lld-link-elf-object.log"
mkdir -p "$t/stl" "$t/vc"
for h in yvals_core.h xkeycheck.h; do
  git -C /work/.mirror/microsoft+STL/repo show "$stl:stl/inc/$h" > "$t/stl/$h"
done
: > "$t/vc/vcruntime.h"
printf '#include <yvals_core.h>\nint main() { return 0; }\n' > "$t/hip_ops.cpp"
(cd "$t" && cl /std:c++17 -imsvc "$t/stl" -imsvc "$t/vc" -D__clang_major__=19 -Wno-macro-redefined \
  /Zs hip_ops.cpp 2>&1) | sed -e "s#$t/stl#C:/BuildTools/VC/Tools/MSVC/14.50/include#g" \
  > "$cases/real-clang-cl-stl-compiler-too-old.log"
printf '#define noexcept\n#include <yvals_core.h>\nint main() { return 0; }\n' > "$t/legacy.cpp"
(cd "$t" && cl /std:c++17 -imsvc "$t/stl" -imsvc "$t/vc" /Zs legacy.cpp 2>&1) \
  | sed -e "s#$t/stl#C:/BuildTools/VC/Tools/MSVC/14.50/include#g" \
  > "$cases/real-clang-cl-keyword-macro.log"
printf '#include <vector>\nint main() { return 0; }\n' > "$t/ops.cpp"
(cd "$t" && cl /c ops.cpp /Foops.obj 2>&1) > "$cases/real-clang-cl-no-msvc-headers.log"
printf 'int main(void) { return 0; }\n' > "$t/hello.c"
(cd "$t" && cl -fuse-ld=link hello.c /Fehello.exe 2>&1) | sed 's/^clang-cl-22:/clang-cl:/' \
  > "$cases/real-clang-cl-no-visual-studio-link.log"
printf '#include <unistd.h>\nint page(void) { return getpagesize(); }\n' > "$t/shm.c"
(cd "$t" && cl /c shm.c /Foshm.obj 2>&1) > "$cases/real-clang-cl-posix-header.log"
(cd "$t" && cl -fPIC /c helper.c /Fohelper_pic.obj 2>&1 && echo "[2/2] Linking C shared library") \
  > "$cases/real-clang-cl-unknown-argument-warning.log"
rm -rf "$t"
