#!/usr/bin/env bash
# devpk5's d8 cases: real output of real programs here (gcc, glibc's ld.so, pip).
#  - real-ld-so-program-no-runpath-libamdhip64: a program linked against a stand-in
#    libamdhip64.so.7 without an rpath, started after the library's folder is off the loader
#    path: ld.so's "error while loading shared libraries" (the program's RUNPATH is the fix).
#  - real-pip-cache-command-cache-disabled: `pip cache remove` with the cache disabled.
#  - real-clang22-llvm-offload-binary-missing: clang-22 copied into a folder of its own (a
#    toolchain without llvm-offload-binary; PATH without LLVM's bin) compiling a HIP kernel
#    with the new offload driver: the driver cannot spawn llvm-offload-binary.
#  - real-rocm-sdk-stub-target-missing: TheRock's own executable stub (exe_stub_gen.py at the
#    commit below, from the local mirror) built as _rocm_sdk_devel/bin/amdclang, pointing at
#    an amdllvm the package does not hold.
#  - real-python-script-top-import-missing-yaml: a generator script whose first import is
#    yaml, run by a Python without site-packages (-S: an interpreter that lacks PyYAML).
#  - real-pip-two-pins-on-one-package: pip resolving "cmake<4" (a script's pin) with
#    "cmake==4.0.3" (a requirements file's), from two local stand-in cmake wheels.
#  - real-tensile-hip-sdk-folder-without-version: Tensile's own toolchain search
#    (Tensile/Utilities/Toolchain.py at the commit below, from the local mirror) with its
#    Windows default folder present and empty; on Linux "C:/Program Files/AMD/ROCm" is a
#    relative path, made in the working folder.
# Writes rounds/d8/cases/<id>.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d8/cases
t=$(mktemp -d)
mkdir -p "$t/sdk/lib"
echo 'int hipInit(unsigned flags) { return (int)flags; }' > "$t/hip.c"
echo 'int hipInit(unsigned flags); int main(void) { return hipInit(0); }' > "$t/main.c"
gcc -shared -fPIC -Wl,-soname,libamdhip64.so.7 -o "$t/sdk/lib/libamdhip64.so.7" "$t/hip.c"
ln -s libamdhip64.so.7 "$t/sdk/lib/libamdhip64.so"
gcc "$t/main.c" -L"$t/sdk/lib" -lamdhip64 -o "$t/test_opus_basic"
(cd "$t" && LANG=C env -u LD_LIBRARY_PATH ./test_opus_basic 2>&1; echo "exit code $?") \
  > "$cases/real-ld-so-program-no-runpath-libamdhip64.log"
(cd "$t" && LANG=C python3 -m pip --no-cache-dir cache remove rocm_sdk 2>&1; echo "exit code $?") \
  > "$cases/real-pip-cache-command-cache-disabled.log"
mkdir -p "$t/tc/bin"
cp "$(dirname "$(readlink -f "$(command -v clang-22)")")/clang" "$t/tc/bin/clang++"
echo '__attribute__((global)) void k(int *p) { *p = 1; }' > "$t/k.hip"
(cd "$t" && PATH=/usr/bin:/bin LANG=C ./tc/bin/clang++ -resource-dir "$(clang-22 \
  -print-resource-dir)" -x hip --offload-arch=gfx1100 --offload-new-driver -nogpuinc -nogpulib \
  -c k.hip -o k.o 2>&1; echo "exit code $?") > "$cases/real-clang22-llvm-offload-binary-missing.log"
mkdir -p "$t/build/bin"
printf '%s\n' '"""Expands a test YAML."""' 'import sys' 'from yaml import CLoader as Loader' \
  'print(Loader, sys.argv)' > "$t/build/bin/rocblas_gentest.py"
(cd "$t" && LANG=C python3 -S build/bin/rocblas_gentest.py -o out.yaml smoke.yaml 2>&1; \
  echo "exit code $?") | sed -e "s#$t#/home/user/TheRock#g" \
  > "$cases/real-python-script-top-import-missing-yaml.log"
mkdir -p "$t/whl"
for v in 3.31.6 4.0.3; do
  mkdir -p "$t/src/cmake-$v"
  printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'\
'[project]\nname = "cmake"\nversion = "%s"\n' "$v" > "$t/src/cmake-$v/pyproject.toml"
  python3 -m pip wheel -q --no-deps --no-build-isolation -w "$t/whl" "$t/src/cmake-$v" \
    >/dev/null 2>&1
done
printf 'cmake==4.0.3\n' > "$t/requirements.txt"
(cd "$t" && LANG=C PIP_CONFIG_FILE=/dev/null env -u PIP_FIND_LINKS python3 -m pip install \
  --dry-run --no-index --find-links whl "cmake<4" -r requirements.txt 2>&1; echo "exit code $?") \
  | sed -e "s#$t#/home/user/build#g" > "$cases/real-pip-two-pins-on-one-package.log"
therock=/work/.mirror/ROCm+TheRock/repo
rev=89553ce3746eda74ade42557470d25e37c91b6f0
if git -C "$therock" cat-file -e "$rev:build_tools/_therock_utils/exe_stub_gen.py" 2>/dev/null
then
  git -C "$therock" show "$rev:build_tools/_therock_utils/exe_stub_gen.py" > "$t/exe_stub_gen.py"
  sdk=$t/env/lib/python3.12/site-packages/_rocm_sdk_devel/bin
  mkdir -p "$sdk"
  (cd "$t" && python3 exe_stub_gen.py "$sdk/amdclang" amdllvm)
  (cd "$t" && LANG=C "$sdk/amdclang" --version 2>&1; echo "exit code $?") \
    | sed -e "s#$t/env#/home/user/venv#g" > "$cases/real-rocm-sdk-stub-target-missing.log"
else
  echo "no ROCm/TheRock mirror at $therock: real-rocm-sdk-stub-target-missing not made" >&2
fi
tensile=/work/.mirror/ROCm+Tensile/repo
trev=a164ed70df55ceb076f4a1f2fa2ea11f0f1384cc
if git -C "$tensile" cat-file -e "$trev:Tensile/Utilities/Toolchain.py" 2>/dev/null; then
  mkdir -p "$t/tl/Tensile/Utilities" "$t/tl/C:/Program Files/AMD/ROCm"
  git -C "$tensile" show "$trev:Tensile/Utilities/Toolchain.py" \
    > "$t/tl/Tensile/Utilities/Toolchain.py"
  printf '%s\n' 'import sys' 'sys.path.insert(0, "Tensile/Utilities")' \
    'from Toolchain import _windowsSearchPaths' 'print(_windowsSearchPaths())' \
    > "$t/tl/search_toolchain.py"
  (cd "$t/tl" && LANG=C python3 search_toolchain.py 2>&1; echo "exit code $?") \
    | sed -e "s#$t/tl#/home/user/tensile#g" \
    > "$cases/real-tensile-hip-sdk-folder-without-version.log"
else
  echo "no ROCm/Tensile mirror at $tensile: real-tensile-hip-sdk-folder-without-version" \
    "not made" >&2
fi
rm -rf "$t"
