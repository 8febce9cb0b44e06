#!/usr/bin/env bash
# devuv8's d10 cases: the Python packaging conditions of the corpus's rules, made here with uv
# and with another pip than the system's, on tiny wheels and sdists built in a temporary
# folder and served only from it (--no-index --find-links, a file:// index, a closed local
# port); the network only once, to download a setuptools wheel for the isolated builds.
# Needs: UV=<uv binary> and PIPOLD=<python of a venv holding the other pip>, e.g.
#   python3 -m venv /tmp/uvv && /tmp/uvv/bin/pip install uv && UV=/tmp/uvv/bin/uv
#   python3 -m venv /tmp/p24 && /tmp/p24/bin/pip install pip==24.0 && PIPOLD=/tmp/p24/bin/python
# Writes <out>/<id>.log (default: rounds/d10/cases), each with the command's exit code: only
# the conditions triage missed before d10 (uv's words); DEVUV8_ALL=1 writes every condition,
# the pip ones named pip<major>-… after the pip PIPOLD holds (the ROUNDS.md d10 table).
set -u
here=$(cd "$(dirname "$0")" && pwd); out=${1:-$here/../rounds/d10/cases}
uv=${UV:-}; p24=${PIPOLD:-}
if [ -z "$uv" ] || ! "$uv" --version >/dev/null 2>&1; then
  echo "devuv8.sh: set UV to a uv binary (pip install uv into a venv)" >&2; exit 2; fi
pv=$([ -n "$p24" ] && "$p24" -m pip --version 2>/dev/null | sed -n 's/^pip \([0-9]*\)\..*/\1/p')
if [ -z "$pv" ]; then
  echo "devuv8.sh: set PIPOLD to the python of a venv holding pip (e.g. pip 24.0)" >&2; exit 2; fi
mkdir -p "$out"
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
export LANG=C PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
export PIP_CACHE_DIR="$t/cache/pip" XDG_CACHE_HOME="$t/cache" UV_CACHE_DIR="$t/cache/uv"
export UV_NO_CONFIG=1 UV_PYTHON_DOWNLOADS=never NO_COLOR=1 COLUMNS=100
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_USER PIP_NO_CACHE_DIR PIP_CONSTRAINT
unset UV_INDEX_URL UV_EXTRA_INDEX_URL UV_FIND_LINKS UV_INDEX UV_DEFAULT_INDEX VIRTUAL_ENV
py=$(command -v python3); port=none
# the conditions triage missed before d10 become cases; DEVUV8_ALL=1 writes every condition
keep=" uv-conflict-app-pins-torch uv-hash-mismatch uv-index-connection-refused
  uv-not-in-find-links-requires-python uv-requires-python-excluded uv-wheel-file-other-platform
  uv-externally-managed uv-not-found-torch-pin uv-index-links-missing-file
  uv-build-isolation-no-setuptools "
run() {  # run <id> <command...>: its output and exit code, the temp folder renamed
  local id=$1; shift
  case "$keep" in *" $id "*|*" $id"$'\n'*) ;; *) [ "${DEVUV8_ALL:-}" = 1 ] || return 0;; esac
  (cd "$t" && "$@" 2>&1; echo "exit code $?") | sed -e "s#$t#/home/user/build#g" \
    -e 's#/tmp/pip-\([a-z-]*\)-[a-z0-9_]\{8\}#/tmp/pip-\1-00000000#g' \
    -e 's#in [0-9.]*m\?s$#in 1ms#' -e "s#127.0.0.1:$port/#127.0.0.1:8080/#g" > "$out/$id.log"
}
mkproj() {  # mkproj <dir> <name> <version> [extra [project] lines]: a setuptools project
  mkdir -p "$1/${2//-/_}" && touch "$1/${2//-/_}/__init__.py"
  printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'\
'[project]\nname = "%s"\nversion = "%s"\n%b' "$2" "$3" "${4:-}" > "$1/pyproject.toml"
}
wheel() { SOURCE_DATE_EPOCH=315532800 "$py" -m pip wheel -q --no-deps --no-build-isolation \
  -w "$t/wh" "$1" >/dev/null 2>&1; }
# local wheels: torch 2.5.1+rocm6.2, torch 2.5.1 (a plain build), torch 2.5.1+cpu,
# rocm-only-pkg needing python >=3.99, a win_amd64-only wheel, and an app pinning torch
mkproj "$t/p/tr" torch 2.5.1+rocm6.2; wheel "$t/p/tr"
mkproj "$t/p/tp" torch 2.5.1; wheel "$t/p/tp"
mkproj "$t/p/tc" torch 2.6.0+cpu; wheel "$t/p/tc"
mkproj "$t/p/fut" future-only 1.0 'requires-python = ">=3.99"\n'; wheel "$t/p/fut"
mkproj "$t/p/app" torchapp 1.0 'dependencies = ["torch==2.5.1"]\n'; wheel "$t/p/app"
mkproj "$t/p/w" winonly 1.0; wheel "$t/p/w"
mv "$t"/wh/winonly-1.0-py3-none-any.whl "$t/wh/winonly-1.0-cp311-cp311-win_amd64.whl"
cp "$t/wh/winonly-1.0-cp311-cp311-win_amd64.whl" "$t/winonly-1.0-cp311-cp311-win_amd64.whl"
rm -rf "$t"/p/*/build "$t"/p/*/*.egg-info
# setuptools for the isolated builds, from the machine's configured index (once, when made)
env -u PIP_CONFIG_FILE "$py" -m pip download -q --no-deps -d "$t/wh" setuptools >/dev/null 2>&1 ||
  { echo "devuv8.sh: could not download a setuptools wheel" >&2; exit 2; }
# a PEP 503 page (file://) that says Requires-Python, as a real index does
mkdir -p "$t/simple/future-only"
printf '<a href="file://%s/wh/future_only-1.0-py3-none-any.whl" data-requires-python="&gt;=3.99">'\
'future_only-1.0-py3-none-any.whl</a>\n' "$t" > "$t/simple/future-only/index.html"
# an sdist whose setup.py imports torch (as extension packages do)
mkdir -p "$t/s/needtorch" && cd "$t/s/needtorch" && touch README
printf 'import torch\nfrom setuptools import setup\nsetup(name="needtorch", version="0.1")\n' > setup.py
cd "$t/s" && tar czf "$t/wh/needtorch-0.1.tar.gz" needtorch && cd "$t"
# an sdist declaring torch as a build requirement (build isolation must fetch it)
mkproj "$t/s/bi" buildiso 0.1
sed -i 's/requires = \["setuptools"\]/requires = ["setuptools", "torch==2.4.0"]/' "$t/s/bi/pyproject.toml"
"$uv" venv -q --python "$py" "$t/uvv"
"$py" -m venv --without-pip "$t/v"
U() { "$uv" pip install --python "$t/uvv/bin/python" --no-index --find-links "$t/wh" "$@"; }
P24() { "$p24" -m pip --python "$t/v/bin/python" install --no-index --find-links "$t/wh" "$@"; }
P26() { "$py" -m pip --python "$t/v/bin/python" install --no-index --find-links "$t/wh" "$@"; }
# 1. no version: a ROCm local version not offered
run uv-no-version-torch-rocm64 U "torch==2.5.1+rocm6.4"
run pip$pv-no-version-torch-rocm64 P24 "torch==2.5.1+rocm6.4"
# 2. a dependency pin no version satisfies (the app needs torch==2.5.1, a different pin given)
run uv-conflict-app-pins-torch U torchapp "torch==2.6.0+cpu"
run pip$pv-conflict-app-pins-torch P24 torchapp "torch==2.6.0+cpu"
# 3. Requires-Python
run uv-not-in-find-links-requires-python U future-only
run uv-requires-python-excluded "$uv" pip install --python "$t/uvv/bin/python" \
  --index-url "file://$t/simple" future-only
run pip$pv-requires-python-excluded "$p24" -m pip --python "$t/v/bin/python" install \
  --index-url "file://$t/simple" future-only
# 4. a wheel for another platform
run uv-platform-tag-win-only U winonly
run uv-wheel-file-other-platform U "$t/winonly-1.0-cp311-cp311-win_amd64.whl"
run pip$pv-wheel-file-other-platform P24 "$t/winonly-1.0-cp311-cp311-win_amd64.whl"
# 5. hash mismatch
printf 'torch==2.5.1+rocm6.2 --hash=sha256:%064d\n' 0 > "$t/req.txt"
run uv-hash-mismatch U -r "$t/req.txt"
run pip$pv-hash-mismatch P24 -r "$t/req.txt"
# 6. index unreachable
run uv-index-connection-refused "$uv" pip install --python "$t/uvv/bin/python" \
  --index-url http://127.0.0.1:9/simple rocm-sdk-libraries
run pip$pv-index-connection-refused "$p24" -m pip --python "$t/v/bin/python" install \
  --index-url http://127.0.0.1:9/simple --retries 1 --timeout 2 rocm-sdk-libraries
# 7. an sdist importing torch where the build cannot see torch
run uv-sdist-no-module-torch U needtorch
run uv-sdist-no-module-torch-no-build-isolation U --no-build-isolation needtorch
run pip$pv-sdist-no-module-torch P24 needtorch
# 7b. the same sdist where the locations hold no setuptools for the isolated build
mkdir -p "$t/wh2" && cp "$t/wh/needtorch-0.1.tar.gz" "$t/wh2/"
run uv-build-isolation-no-setuptools "$uv" pip install --python "$t/uvv/bin/python" --no-index \
  --find-links "$t/wh2" needtorch
run pip$pv-build-isolation-no-setuptools "$p24" -m pip --python "$t/v/bin/python" install \
  --no-index --find-links "$t/wh2" needtorch
# 8. build isolation asked for a torch the index does not have
run uv-build-isolation-torch-missing U "$t/s/bi"
run pip$pv-build-isolation-torch-missing P24 "$t/s/bi"
# 9. no setuptools for --no-build-isolation
run uv-no-build-isolation-no-setuptools U --no-build-isolation "$t/s/bi"
# 10. a ROCm torch replaced by the plain build
U -q "torch==2.5.1+rocm6.2" >/dev/null 2>&1
run uv-replaces-rocm-torch U --upgrade torch
# 11. uv add / uv sync in a project whose pin no version satisfies
mkdir -p "$t/proj" && printf '[project]\nname = "proj"\nversion = "0.1"\nrequires-python = ">=3.10"\ndependencies = []\n' > "$t/proj/pyproject.toml"
run uv-add-no-version-torch-rocm64 "$uv" add --project "$t/proj" --python "$py" --no-index \
  --find-links "$t/wh" "torch==2.5.1+rocm6.4"
printf '[project]\nname = "proj"\nversion = "0.1"\nrequires-python = ">=3.10"\ndependencies = ["torch==2.5.1+rocm6.4"]\n' > "$t/proj/pyproject.toml"
run uv-sync-no-version-torch-rocm64 "$uv" sync --project "$t/proj" --python "$py" --no-index \
  --find-links "$t/wh"
# 12. an externally managed Python (Debian's /usr/bin/python3, PEP 668): a requirement no
# location holds, so nothing could be installed even if the check were not there
if [ -f /usr/lib/python3.11/EXTERNALLY-MANAGED ] && [ -x /usr/bin/python3.11 ]; then
  run uv-externally-managed "$uv" pip install --python /usr/bin/python3.11 --no-index \
    --find-links "$t/p" "torch==2.5.1+rocm6.4"
  run pip$pv-externally-managed "$p24" -m pip --python /usr/bin/python3.11 install --no-index \
    --find-links "$t/p" "torch==2.5.1+rocm6.4"
fi
# 13. a pin that no location holds, named by version (uv's "was not found ... and you
# require torch==…")
run uv-not-found-torch-pin "$uv" pip install --python "$t/uvv/bin/python" --no-index \
  --find-links "$t/p" "torch==2.5.1+rocm6.4"
# 14. an index page linking a file its server does not have (HTTP 404), served by
# python3 -m http.server on a free local port
mkdir -p "$t/srv/simple/torch"
printf '<a href="/files/torch-2.5.1+rocm6.2-py3-none-any.whl">torch-2.5.1+rocm6.2-py3-none-any'\
'.whl</a>\n' > "$t/srv/simple/torch/index.html"
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
"$py" -m http.server "$port" --bind 127.0.0.1 -d "$t/srv" >/dev/null 2>&1 & srv=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do
  "$py" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/simple/torch/')" \
    2>/dev/null && break; sleep 0.2; done
"$uv" venv -q --python "$py" "$t/uvw"
run uv-index-links-missing-file "$uv" pip install --python "$t/uvw/bin/python" \
  --index-url "http://127.0.0.1:$port/simple" torch
run pip$pv-index-links-missing-file "$p24" -m pip --python "$t/v/bin/python" install \
  --index-url "http://127.0.0.1:$port/simple" torch
kill "$srv"; wait "$srv" 2>/dev/null
exit 0
