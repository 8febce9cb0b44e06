#!/usr/bin/env bash
# python-packaging: pip>=25 (upgraded in a fresh Python 3.11 venv) building local projects with build isolation,
# offline (--no-index, --find-links to a folder holding only the setuptools>=82 wheel fetched once
# with `pip download`). Machine pip config is ignored (PIP_CONFIG_FILE=/dev/null).
#  real-pkg-resources-removed: a torchvision-like setup.py that does
#    `from pkg_resources import parse_version`; setuptools 82 no longer ships pkg_resources.
#  real-build-isolation-torch: a companion setup.py that does `import torch`; torch is installed in
#    the venv (--system-site-packages, torch 2.13.0+cpu) but the isolated build env does not see it.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../cases
export HIP_PLATFORM=amd
t=$(mktemp -d)
python3 -m venv --system-site-packages "$t/venv"
"$t/venv/bin/python" -c "import torch" || { echo "needs torch in the base python" >&2; exit 1; }
mkdir -p "$t/wheels"
"$t/venv/bin/pip" install -q --upgrade 'pip>=25' 2>/dev/null
"$t/venv/bin/pip" download -q --no-deps -d "$t/wheels" 'setuptools>=82' 2>/dev/null
unset PIP_FIND_LINKS; export PIP_CONFIG_FILE=/dev/null
mkdir -p "$t/src/vision/torchvision" "$t/src/audio/torchaudio"
cat > "$t/src/vision/setup.py" <<'PY'
import os
import sys

from pkg_resources import DistributionNotFound, get_distribution, parse_version
from setuptools import find_packages, setup

version = "0.16.0a0"
setup(name="torchvision", version=version, packages=find_packages())
PY
touch "$t/src/vision/torchvision/__init__.py"
cat > "$t/src/audio/setup.py" <<'PY'
import os

import torch
from setuptools import find_packages, setup

print("Building against torch", torch.__version__)
setup(name="torchaudio", version="2.9.0a0", packages=find_packages())
PY
touch "$t/src/audio/torchaudio/__init__.py"
pipi() { (cd "$t/src" && "$t/venv/bin/pip" install --no-index --find-links "$t/wheels" "$1" 2>&1) \
  | sed -e "s#$t/wheels#/home/user/wheels#g; s#$t/src#/home/user/src#g; s#$t/venv#/home/user/rocm-venv#g; s#/tmp/pip-[a-z0-9_-]*#/tmp/pip-build-env#g"; }
pipi ./vision > "$cases/real-pkg-resources-removed.log"
pipi ./audio > "$cases/real-build-isolation-torch.log"
"$t/venv/bin/pip" --version >&2; ls "$t/wheels" >&2
rm -rf "$t"
