#!/usr/bin/env bash
# disk-full: writes into a full 4 MiB tmpfs (mount -t tmpfs -o size=4m; filled with dd).
#  real-disk-full-link: a Ninja build (cmake 3.25.1 --build) whose build dir is on the tmpfs; the
#    object was compiled before the disk filled, so GNU ld 2.40 fails writing libtorch_hip.so.
#  real-disk-full-pip-wheel: pip 23 (venv, --no-index --no-build-isolation) building a local
#    project's wheel with --wheel-dir on the full tmpfs.
# Needs root (mount). The mount point is rewritten to /home/user/pytorch (build) and
# /home/user/wheels (wheel dir); the temp dir to /home/user.
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../cases
export HIP_PLATFORM=amd
t=$(mktemp -d); m=$t/mnt; mkdir -p "$m"
mount -t tmpfs -o size=4m tmpfs "$m" || { echo "mount not permitted" >&2; exit 1; }
trap 'umount "$m"; rm -rf "$t"' EXIT
fill() { dd if=/dev/zero of="$m/filler.bin" bs=64k 2>/dev/null; sync; }
# --- link
mkdir -p "$m/aten/src/ATen/hip"
cat > "$m/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(Torch CXX)
add_library(torch_hip SHARED aten/src/ATen/hip/HIPContext.cpp)
CM
cat > "$m/aten/src/ATen/hip/HIPContext.cpp" <<'C'
#include <string>
std::string hip_context_name() { return "hip context"; }
C
cmake -G Ninja -S "$m" -B "$m/build" -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1
(cd "$m" && cmake --build build --target CMakeFiles/torch_hip.dir/aten/src/ATen/hip/HIPContext.cpp.o >/dev/null 2>&1)
fill
(cd "$m" && cmake --build build 2>&1) | sed -e "s#$m#/home/user/pytorch#g" > "$cases/real-disk-full-link.log"
rm -rf "${m:?}"/*
# --- pip wheel
python3 -m venv "$t/venv" >/dev/null
"$t/venv/bin/pip" install -q 'setuptools>=75' wheel
unset PIP_FIND_LINKS; export PIP_CONFIG_FILE=/dev/null  # no machine-local find-links in the log
mkdir -p "$t/proj/torchvision" "$m/wheels"
cat > "$t/proj/setup.py" <<'PY'
from setuptools import setup
setup(name="torchvision", version="0.24.0a0", packages=["torchvision"])
PY
head -c 3000000 /dev/urandom | base64 > "$t/proj/torchvision/_assets.txt"
echo 'from pathlib import Path' > "$t/proj/torchvision/__init__.py"
cat > "$t/proj/MANIFEST.in" <<'M'
include torchvision/_assets.txt
M
printf '[options.package_data]\ntorchvision = _assets.txt\n' > "$t/proj/setup.cfg"
dd if=/dev/zero of="$m/filler.bin" bs=64k count=40 2>/dev/null
(cd "$t" && "$t/venv/bin/pip" wheel --no-index --no-build-isolation --no-deps -w "$m/wheels" ./proj 2>&1) \
  | sed -e "s#$m/wheels#/home/user/wheels#g; s#$t#/home/user#g; s#/tmp/pip-[a-z0-9_-]*#/tmp/pip-build#g" \
  > "$cases/real-disk-full-pip-wheel.log"
