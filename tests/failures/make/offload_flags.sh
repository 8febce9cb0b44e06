#!/usr/bin/env bash
# Offload-target and device-flag shapes (issue 40, r11 after), made with clang++-22 on a HIP
# source (no ROCm needed: -nogpulib -nogpuinc):
#  - --offload-arch='gfx1100;gfx90a': a list that reached the driver as one value
#  - --offload-arch=gfx1100:xnack+: a target ID with a feature the processor does not have
#  - -fcf-protection and -fzero-call-used-regs: host-only hardening flags on the device side
# Writes rounds/d7/cases/real-*.log (the .toml answers are committed beside them).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d7/cases
t=$(mktemp -d)
printf '__attribute__((global)) void k() {}\n' > "$t/k.hip"
hip() { (cd "$t" && clang++-22 -x hip -nogpulib -nogpuinc -c k.hip -o k.o "$@" 2>&1); }
hip '--offload-arch=gfx1100;gfx90a' > "$cases/real-clang-offload-arch-list-as-one.log"
hip --offload-arch=gfx1100:xnack+ > "$cases/real-clang-target-id-feature-not-on-rdna.log"
hip --offload-arch=gfx1100 -O2 -fstack-protector-strong -fcf-protection \
  > "$cases/real-clang-cf-protection-on-device.log"
hip --offload-arch=gfx1100 -fzero-call-used-regs=used-gpr \
  > "$cases/real-clang-host-only-option-amdgcn.log"
rm -rf "$t"
