#!/usr/bin/env bash
# devpk6's d9 cases: real output of real programs here (pip 26.3, CPython 3.11).
#  - real-pip-replaces-rocm-torch-stand-in: a venv holding a stand-in torch 2.11.0+rocm7.13.0
#    (a wheel named torch with that local version, nothing inside), then pip installing a
#    stand-in package that requires torch==2.10.0 from a folder with both wheels: pip
#    uninstalls the +rocm build and installs the plain one.
#  - real-python-runtime-module-missing-packaging: a package installed in a venv without
#    `packaging` imports it at run time (the verify step).
#  - real-python-own-compiled-part-missing (negative): a package whose own compiled module
#    (demo_attn_2_cuda) is absent: not a dependency to install, so nothing is claimed.
#  - real-python-bb-bytes-warning-user-code (negative): `python -bb` on a script (not
#    Triton) formatting bytes in an f-string: no Triton frame, nothing claimed.
# Writes rounds/d9/cases/<id>.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
t=$(mktemp -d)
mkdir -p "$t/whl"
standin() {  # name version [dependency]
  local dir=$t/src/$1-$2 deps=""
  [ -n "${3:-}" ] && deps="dependencies = [\"$3\"]"
  mkdir -p "$dir"
  printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'\
'[project]\nname = "%s"\nversion = "%s"\n%s\n' "$1" "$2" "$deps" > "$dir/pyproject.toml"
  python3 -m pip wheel -q --no-deps --no-build-isolation -w "$t/whl" "$dir" >/dev/null 2>&1
}
standin torch 2.11.0+rocm7.13.0
standin torch 2.10.0
standin studio-standin 1.0 "torch==2.10.0"
python3 -m venv "$t/v"
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
"$t/v/bin/python" -m pip install -q --no-index --find-links "$t/whl" "torch==2.11.0+rocm7.13.0"
(cd "$t" && LANG=C env -u PIP_FIND_LINKS "$t/v/bin/python" -m pip install --no-index \
  --find-links whl studio-standin 2>&1; echo "exit code $?") \
  | sed -e "s#$t/v#/home/user/venv#g" -e "s#$t#/home/user/build#g" \
  > "$cases/real-pip-replaces-rocm-torch-stand-in.log"
python3 -m venv --without-pip "$t/bare"
site=$("$t/bare/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$site/demo_kernels" "$site/demo_attn"
printf 'from packaging.version import Version\nMIN = Version("1.0")\n' \
  > "$site/demo_kernels/__init__.py"
printf 'import demo_attn_2_cuda\n' > "$site/demo_attn/__init__.py"
(cd "$t" && LANG=C "$t/bare/bin/python" -c 'import demo_kernels' 2>&1; echo "exit code $?") \
  | sed -e "s#$t/bare#/home/user/venv#g" \
  > "$cases/real-python-runtime-module-missing-packaging.log"
(cd "$t" && LANG=C "$t/bare/bin/python" -c 'import demo_attn' 2>&1; echo "exit code $?") \
  | sed -e "s#$t/bare#/home/user/venv#g" \
  > "$cases/real-python-own-compiled-part-missing.log"
printf 'version = b"LLD 17.0.0"\nprint(f"{version}-gfx1100")\n' > "$t/cache_key.py"
(cd "$t" && LANG=C python3 -bb "$t/cache_key.py" 2>&1; echo "exit code $?") \
  | sed -e "s#$t#/home/user/work#g" > "$cases/real-python-bb-bytes-warning-user-code.log"
rm -rf "$t"
