#!/usr/bin/env bash
# devpy's d9 cases: real output of pip, setuptools, CPython, gcc and torch's cpp_extension run
# here on tiny projects made in a temporary folder (local wheels, a file:// index, a closed
# port, a local server; the network only to install setuptools-scm, skipped without it).
#  - real-pip-index-connection-refused: an --index-url on a closed local port.
#  - real-pip-hash-mismatch-pinned-wheel: a local wheel pinned with the wrong --hash.
#  - real-pip-invalid-requirement-single-equals: `pip install 'torch=2.1'`.
#  - real-pip-uninstall-no-record-file / real-pip-uninstall-distutils-project: a venv whose
#    blinker 1.4 has no RECORD (a .dist-info without it, a bare .egg-info file), upgraded.
#  - real-pip-user-install-in-venv: --user inside a venv without system site-packages.
#  - real-pip-directory-not-installable: an empty folder (an unfilled submodule).
#  - real-pip-requirements-file-missing: -r naming a file that is not there.
#  - real-setuptools-flat-layout-multiple-packages: two top-level packages, no packages=.
#  - real-cpp-extension-cuda-home-unset: a CUDAExtension setup.py run by a torch that is not
#    a ROCm build, on a machine without CUDA.
#  - real-pip-requires-python-excluded-all: a file:// index whose only release needs
#    Python >=3.99.
#  - real-cpp-extension-ninja-missing: load_inline with only the compilers on PATH.
#  - real-python-venv-without-pip-module: `python -m pip` in a venv made --without-pip.
#  - real-pip-wheel-renamed-by-second-download: a wheel saved as "… (1).whl".
#  - real-python-cannot-import-name-from-torch: `from torch import <a name torch lacks>`.
#  - real-pip-backend-unavailable-no-setuptools: --no-build-isolation in a venv without
#    setuptools (already right before d9: no-module).
#  - real-setuptools-*: a package folder or data file not there, License classifiers with a
#    license expression, a [project] without name, build_ext with no compiler on PATH.
#  - real-pip-install-permission-denied-other-users-venv: pip as nobody into root's venv.
#  - real-torch-imported-from-source-checkout: `import torch` where torch/_C is a folder.
#  - real-python312-import-distutils-without-setuptools: a 3.12+ venv without setuptools.
#  - real-pip-http-index-untrusted-host: an http index pip ignores (not --trusted-host).
#  - real-pip-download-stalled-incomplete: make/devpy/stall_server.py stalls the wheel.
#  - real-setuptools-scm-no-git-metadata: setuptools-scm in a folder without .git.
#  - real-pip-wheel-renamed-invalid-filename: a wheel saved as blinker-latest.whl.
#  - real-python-torch-has-no-attribute: torch.<a name torch lacks>.
#  - negatives: real-setuptools-license-classifiers-deprecated-warning (a wheel is built),
#    real-cpp-extension-error-building-own-code (a compile error in the code itself),
#    real-pip-extra-index-refused-then-installed (the retry warning, then the
#    wheel from --find-links installs) and real-python-circular-import-cannot-import-name.
# Writes rounds/d9/cases/<id>.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
export LANG=C PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
export PIP_CACHE_DIR="$t/cache/pip" XDG_CACHE_HOME="$t/cache" CCACHE_DIR="$t/cache/ccache"
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_USER PIP_NO_CACHE_DIR
py=$(command -v python3)
pip() { "$py" -m pip --python "$t/v/bin/python" "$@"; }
run() {  # run <id> <command...>: its output and exit code, the temp folder renamed
  local id=$1; shift
  (cd "$t" && "$@" 2>&1; echo "exit code $?") | sed -e "s#$t#/home/user/build#g" \
    -e 's#/tmp/pip-\([a-z-]*\)-[a-z0-9_]\{8\}#/tmp/pip-\1-00000000#g' > "$cases/$id.log"
}
"$py" -m venv --without-pip "$t/v"
"$py" -m venv --without-pip --system-site-packages "$t/vs"
# a blinker 1.9.0 wheel, built here
mkdir -p "$t/bl/blinker" && touch "$t/bl/blinker/__init__.py"
printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'\
'[project]\nname = "blinker"\nversion = "1.9.0"\n' > "$t/bl/pyproject.toml"
SOURCE_DATE_EPOCH=315532800 "$py" -m pip wheel -q --no-deps --no-build-isolation -w "$t/wh" "$t/bl" >/dev/null 2>&1
run real-pip-index-connection-refused pip install --index-url http://127.0.0.1:9/simple \
  --retries 1 --timeout 2 rocm-sdk-libraries
run real-pip-extra-index-refused-then-installed pip install --index-url \
  http://127.0.0.1:9/simple --retries 0 --timeout 2 --find-links wh blinker
echo "./wh/blinker-1.9.0-py3-none-any.whl --hash=sha256:$(printf '0%.0s' {1..64})" \
  > "$t/hashed.txt"
run real-pip-hash-mismatch-pinned-wheel pip install --no-deps -r hashed.txt
run real-pip-invalid-requirement-single-equals pip install --no-index 'torch=2.1'
sp=$("$t/v/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
mkdir -p "$sp/blinker-1.4.dist-info"
printf 'Metadata-Version: 2.1\nName: blinker\nVersion: 1.4\n' > "$sp/blinker-1.4.dist-info/METADATA"
run real-pip-uninstall-no-record-file pip install --no-index --find-links wh blinker==1.9.0
rm -r "$sp/blinker-1.4.dist-info"
printf 'Metadata-Version: 1.0\nName: blinker\nVersion: 1.4\n' > "$sp/blinker-1.4-py3.11.egg-info"
run real-pip-uninstall-distutils-project pip install --no-index --find-links wh blinker==1.9.0
rm "$sp/blinker-1.4-py3.11.egg-info"
run real-pip-user-install-in-venv pip install --user --no-index blinker
mkdir -p "$t/third_party/composable_kernel"
run real-pip-directory-not-installable pip install --no-index ./third_party/composable_kernel
run real-pip-requirements-file-missing pip install --no-index -r requirements-rocm.txt
mkdir -p "$t/flat/mypkg" "$t/flat/build_rocm"
touch "$t/flat/mypkg/__init__.py" "$t/flat/build_rocm/__init__.py"
printf 'from setuptools import setup\nsetup(name="mypkg", version="0.1")\n' > "$t/flat/setup.py"
run real-setuptools-flat-layout-multiple-packages "$py" -m pip --python "$t/vs/bin/python" \
  install --no-index --no-build-isolation --no-deps ./flat
run real-pip-backend-unavailable-no-setuptools pip install --no-index --no-build-isolation \
  --no-deps ./flat
printf '%s\n' 'from setuptools import setup' \
  'from torch.utils.cpp_extension import BuildExtension, CUDAExtension' \
  'setup(name="fused_ops", ext_modules=[CUDAExtension("fused_ops", ["fused.cu"])],' \
  '      cmdclass={"build_ext": BuildExtension})' > "$t/setup.py"
run real-cpp-extension-cuda-home-unset env -u CUDA_HOME -u CUDA_PATH -u ROCM_HOME \
  -u ROCM_PATH "$py" setup.py build_ext
run real-python-cannot-import-name-from-torch "$py" -c \
  'from torch import rocm_sdk_initialize'
mkdir -p "$t/loop"
printf 'from loop.b import helper\n\ndef setup_ops():\n    return helper\n' > "$t/loop/a.py"
printf 'from loop.a import setup_ops\n\ndef helper():\n    return setup_ops\n' > "$t/loop/b.py"
touch "$t/loop/__init__.py"
run real-python-circular-import-cannot-import-name "$py" -c 'import loop.a'
# an index (a local file:// one) whose only blinker requires a Python newer than this one
mkdir -p "$t/idx/simple/blinker"
"$py" -m venv --without-pip "$t/vr"
cp "$t/wh/blinker-1.9.0-py3-none-any.whl" "$t/idx/simple/blinker/"
printf '<!DOCTYPE html><html><body>\n<a href="blinker-1.9.0-py3-none-any.whl" '\
'data-requires-python="&gt;=3.99">blinker-1.9.0-py3-none-any.whl</a>\n</body></html>\n' \
  > "$t/idx/simple/blinker/index.html"
run real-pip-requires-python-excluded-all "$py" -m pip --python "$t/vr/bin/python" install \
  --index-url "file://$t/idx/simple" blinker
# torch's JIT build with no ninja on PATH (only the compilers)
mkdir -p "$t/nobin"
for tool in gcc g++ c++; do ln -s "$(command -v "$tool")" "$t/nobin/$tool"; done
real_py=$("$py" -c 'import sys; print(sys.executable)')
printf '%s\n' 'from torch.utils.cpp_extension import load_inline' \
  'load_inline(name="probe", cpp_sources="int probe() { return 1; }", functions=["probe"])' \
  > "$t/jit.py"
run real-cpp-extension-ninja-missing env PATH="$t/nobin" "$real_py" jit.py
# a venv without pip, asked to run pip; a wheel renamed by a second download
"$py" -m venv --without-pip "$t/vn"
run real-python-venv-without-pip-module "$t/vn/bin/python" -m pip install blinker
cp "$t/wh/blinker-1.9.0-py3-none-any.whl" "$t/blinker-1.9.0-py3-none-any (1).whl"
run real-pip-wheel-renamed-by-second-download "$py" -m pip --python "$t/vn/bin/python" \
  install --no-index "./blinker-1.9.0-py3-none-any (1).whl"
# setuptools refusing a project: a package folder or a data file not there, License
# classifiers beside a license expression, a [project] table without a name; build_ext
# with no compiler on PATH. The negative: License classifiers alone (a warning, a wheel).
mkdir -p "$t/s1" "$t/s2/pk" "$t/s3" "$t/s4" "$t/s5" "$t/s6" "$t/out"
printf 'from setuptools import setup\nsetup(name="s1", version="0.1", '\
'packages=["third_party.kernels"])\n' > "$t/s1/setup.py"
run real-setuptools-package-directory-missing env -C "$t/s1" "$real_py" setup.py -q bdist_wheel
touch "$t/s2/pk/__init__.py"
printf 'from setuptools import setup\nsetup(name="s2", version="0.1", packages=["pk"], '\
'data_files=[("share", ["csrc/ck/README.md"])])\n' > "$t/s2/setup.py"
run real-setuptools-copy-source-missing env -C "$t/s2" "$real_py" setup.py -q bdist_wheel
backend='[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
printf "$backend"'[project]\nname = "s3"\nversion = "0.1"\nlicense = "MIT"\n'\
'classifiers = ["License :: OSI Approved :: MIT License"]\n' > "$t/s3/pyproject.toml"
run real-setuptools-license-classifiers-with-expression "$py" -m pip wheel --no-deps \
  --no-build-isolation --no-index -w out ./s3
printf "$backend"'[project]\nversion = "0.1"\n' > "$t/s4/pyproject.toml"
run real-setuptools-pyproject-project-without-name "$py" -m pip wheel --no-deps \
  --no-build-isolation --no-index -w out ./s4
printf "$backend"'[project]\nname = "s6"\nversion = "0.1"\n'\
'classifiers = ["License :: OSI Approved :: MIT License"]\n' > "$t/s6/pyproject.toml"
run real-setuptools-license-classifiers-deprecated-warning "$py" -m pip wheel --no-deps \
  --no-build-isolation --no-index -w out -v ./s6
printf 'int f(void) { return 1; }\n' > "$t/s5/f.c"
printf 'from setuptools import setup, Extension\nsetup(name="s5", version="0.1", '\
'ext_modules=[Extension("f", ["f.c"])])\n' > "$t/s5/setup.py"
mkdir -p "$t/empty"
run real-setuptools-build-ext-no-compiler env -C "$t/s5" PATH="$t/empty" "$real_py" setup.py \
  -q build_ext
# pip run by another user than the venv's owner (root's venv, pip as nobody): as root, with
# a system Python whose venv module installs pip (both readable by nobody)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null \
    && /usr/bin/python3 -m venv "$t/vroot" >/dev/null 2>&1; then
  chmod -R a+rX "$t/vroot" "$t/wh" && chmod a+rx "$t"
  run real-pip-install-permission-denied-other-users-venv setpriv --reuid=65534 \
    --regid=65534 --clear-groups env HOME=/tmp "$t/vroot/bin/python" -m pip install \
    --no-index --find-links wh blinker
fi
# `import torch` inside a checkout-like tree: torch/ holds the installed torch's files as
# links, but its _C is a folder of sources (as in a PyTorch checkout), not the extension
torch_dir=$("$py" -c 'import importlib.util as u; print(u.find_spec("torch").submodule_search_locations[0])' 2>/dev/null)
if [ -n "$torch_dir" ]; then
  mkdir -p "$t/pytorch/torch/_C"
  for entry in "$torch_dir"/*; do
    case ${entry##*/} in _C|_C.*) ;; *) ln -s "$entry" "$t/pytorch/torch/${entry##*/}" ;; esac
  done
  touch "$t/pytorch/torch/_C/_VariableFunctions.pyi.in"
  run real-torch-imported-from-source-checkout env -C "$t/pytorch" "$real_py" -c 'import torch'
fi
# the negative: torch's JIT build of code with its own compile error ("Error building
# extension" says only that the build failed; the compiler's error is the project's code)
printf '%s\n' 'from torch.utils.cpp_extension import load_inline' \
  'load_inline(name="bad", cpp_sources="int f() { return undeclared_thing; }", functions=["f"])' \
  > "$t/bad.py"
run real-cpp-extension-error-building-own-code env TORCH_EXTENSIONS_DIR="$t/ext" "$real_py" bad.py
# `import distutils` in a venv of Python 3.12 or newer (no setuptools there): only where one
# is installed (pyenv's, or a distro's python3.12/3.13)
new_py=
for cand in "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3 /usr/bin/python3.1[2-9]; do
  if [ -x "$cand" ] && "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 12))' \
      2>/dev/null; then new_py=$cand; break; fi
done
if [ -n "$new_py" ] && "$new_py" -m venv --without-pip "$t/v312" 2>/dev/null; then
  run real-python312-import-distutils-without-setuptools "$t/v312/bin/python" -c \
    'from distutils.core import setup'
fi
# an http index on another host than localhost, not trusted (pip ignores it; no network used)
run real-pip-http-index-untrusted-host "$py" -m pip --python "$t/vn/bin/python" install \
  --index-url \
  http://pypi.mirror.invalid/simple --timeout 2 --retries 0 blinker
# a download that stalls after a few bytes (a local server, ended by its pid)
"$py" "$here/devpy/stall_server.py" "$t/port" & server=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$t/port" ] && break; sleep 0.3; done
run real-pip-download-stalled-incomplete "$py" -m pip --python "$t/vn/bin/python" install \
  --no-cache-dir --index-url \
  "http://127.0.0.1:$(cat "$t/port")/simple" --timeout 2 --retries 0 blinker
kill "$server"; wait "$server" 2>/dev/null
sed -i -e 's#127\.0\.0\.1:[0-9]*#127.0.0.1:8080#g' "$cases/real-pip-download-stalled-incomplete.log"
# setuptools-scm asked for a version in a folder without git (an archive's sources): needs
# setuptools-scm from the index pip is configured with; skipped where it cannot be had
"$py" -m venv --without-pip --system-site-packages "$t/vscm"
if env -u PIP_CONFIG_FILE "$py" -m pip --python "$t/vscm/bin/python" install -q \
    setuptools-scm >/dev/null 2>&1; then
  mkdir -p "$t/proj-1.0/proj" && touch "$t/proj-1.0/proj/__init__.py"
  printf '[build-system]\nrequires = ["setuptools", "setuptools-scm"]\n'\
'build-backend = "setuptools.build_meta"\n[project]\nname = "proj"\ndynamic = ["version"]\n'\
'[tool.setuptools_scm]\n' > "$t/proj-1.0/pyproject.toml"
  run real-setuptools-scm-no-git-metadata "$py" -m pip --python "$t/vscm/bin/python" wheel \
    --no-deps --no-build-isolation --no-index -w out ./proj-1.0
fi
# a wheel saved under a name of the user's choosing
cp "$t/wh/blinker-1.9.0-py3-none-any.whl" "$t/blinker-latest.whl"
run real-pip-wheel-renamed-invalid-filename "$py" -m pip --python "$t/vn/bin/python" install \
  --no-index ./blinker-latest.whl
# a name the installed torch does not have, read as an attribute
run real-python-torch-has-no-attribute "$real_py" -c 'import torch; print(torch.rocm_version)'
