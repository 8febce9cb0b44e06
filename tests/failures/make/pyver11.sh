#!/usr/bin/env bash
# Python-side failures of issue 40 under Python 3.12 and 3.13 (d11, pyver11), made with the real
# interpreters (pyenv's 3.11.7, 3.12.1, 3.13.0) in temporary venvs; nothing is installed into them.
#  - an old setup.py that does `import imp` (3.12) / `import pipes` (3.13): modules CPython took
#    out of its standard library (python-packaging: no-module, the removed-module reading)
#  - a torch-shaped package whose __init__ does `from torch._C import *` and whose _C was built
#    with 3.11's headers (_C.cpython-311-x86_64-linux-gnu.so), imported by 3.12 and 3.13:
#    "No module named 'torch._C'" (no-module, the torch._C reading). The package is a stand-in;
#    the message and the frames are CPython's own.
#  - pip 24.2 (3.13.0's bundled one, offline) installing a wheel tagged cp313-cp313t (the
#    free-threaded build's ABI) into the default 3.13.0: "is not a supported wheel on this
#    platform" (pip-unsupported-wheel, its free-threaded reading). The wheel is a tiny stand-in.
#  - a script's folder holding its own torch.py (and random.py), run by 3.13.0: CPython 3.13's
#    "(consider renaming '<file>' ...)" hint (python-packaging: module-shadowed-by-local-file);
#    the same folder run by 3.11.7 says "partially initialized module ... circular import",
#    which proves no hiding file alone (a negative: triage claims nothing).
# Also prints which removed-module names each interpreter lacks (the table in
# rocmforge/triage/parsers/extension_abi.py). Needs the three pythons and gcc. Writes
# rounds/d11/cases/real-py31*.log (the .toml answers are committed beside them). A few seconds.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d11/cases
pv=/root/.pyenv/versions
py311=$pv/3.11.7/bin/python3; py312=$pv/3.12.1/bin/python3; py313=$pv/3.13.0/bin/python3
for tool in "$py311" "$py312" "$py313" gcc; do
  command -v "$tool" >/dev/null || { echo "pyver11.sh needs $tool" >&2; exit 2; }
done
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
scrub() { sed -e "s#$t#/home/user/proj#g; s#$pv/[0-9.]*#/usr#g"; }
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1

for py in "$py311" "$py312" "$py313"; do
  "$py" -W ignore -c 'import importlib
gone = []
for m in ("imp asynchat asyncore smtpd aifc audioop cgi cgitb chunk crypt imghdr mailcap nis "
          "nntplib ossaudiodev pipes sndhdr spwd sunau telnetlib uu xdrlib lib2to3").split():
    try:
        importlib.import_module(m)
    except ModuleNotFoundError:
        gone.append(m)
import sys; print(sys.version.split()[0], "lacks:", " ".join(gone) or "none")' >&2
done

"$py312" -m venv --without-pip "$t/v12"
"$py313" -m venv "$t/v13" >/dev/null
mkdir -p "$t/old"
printf 'import imp\nfrom setuptools import setup\n\nsetup(name="oldext")\n' > "$t/old/setup.py"
(cd "$t/old" && "$t/v12/bin/python" setup.py build 2>&1) | scrub \
  > "$cases/real-py312-imp-removed.log"
printf 'import pipes\nfrom setuptools import setup\n\nsetup(name="oldext")\n' > "$t/old/setup.py"
(cd "$t/old" && "$t/v13/bin/python" setup.py build 2>&1) | scrub \
  > "$cases/real-py313-pipes-removed.log"

mkdir -p "$t/pkg/torch"
printf 'import os\nimport sys\n\nfrom torch._C import *  # noqa: F403\n' > "$t/pkg/torch/__init__.py"
printf '#include <Python.h>\nstatic struct PyModuleDef m = {PyModuleDef_HEAD_INIT, "_C", 0, -1, 0};\nPyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&m); }\n' \
  > "$t/c.c"
inc=$("$py311" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
gcc -shared -fPIC -I"$inc" -o "$t/pkg/torch/_C.cpython-311-x86_64-linux-gnu.so" "$t/c.c" || exit 1
(cd "$t/pkg" && "$py311" -c 'import torch; print("3.11 imports it")' >&2)
(cd "$t/pkg" && "$t/v12/bin/python" -c 'import torch' 2>&1) | scrub \
  > "$cases/real-py312-torch-c-built-for-311.log"
(cd "$t/pkg" && "$t/v13/bin/python" -c 'import torch' 2>&1) | scrub \
  > "$cases/real-py313-torch-c-built-for-311.log"

"$py313" - "$t" <<'PY'
import os, sys, zipfile
dist = "flash_attn-2.7.0.dist-info"
with zipfile.ZipFile(os.path.join(sys.argv[1], "flash_attn-2.7.0-cp313-cp313t-linux_x86_64.whl"),
                     "w") as z:
    z.writestr(f"{dist}/METADATA", "Metadata-Version: 2.1\nName: flash_attn\nVersion: 2.7.0\n")
    z.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: x\nRoot-Is-Purelib: false\n"
               "Tag: cp313-cp313t-linux_x86_64\n")
    z.writestr(f"{dist}/RECORD", "")
PY
(cd "$t" && v13/bin/python -m pip install ./flash_attn-2.7.0-cp313-cp313t-linux_x86_64.whl 2>&1) \
  | scrub > "$cases/real-py313-pip-wheel-free-threaded-abi.log"

mkdir -p "$t/proj"
printf 'import torch\nprint(torch.cuda.is_available())\n' > "$t/proj/torch.py"
printf 'import torch\nprint(torch.version.hip)\n' > "$t/proj/check_gpu.py"
(cd "$t/proj" && "$py313" check_gpu.py 2>&1) | scrub > "$cases/real-py313-local-torch-py-shadows-torch.log"
(cd "$t/proj" && "$py311" check_gpu.py 2>&1) | scrub \
  > "$cases/neg-py311-local-torch-py-partially-initialized.log"
mkdir -p "$t/rnd"
printf 'import random\nprint(random.randint(1, 6))\n' > "$t/rnd/random.py"
printf 'import random\n' > "$t/rnd/dice.py"
(cd "$t/rnd" && "$py313" dice.py 2>&1) | scrub > "$cases/real-py313-local-random-py-shadows-stdlib.log"
