#!/usr/bin/env bash
# link: (1) a library named by a full path that does not exist (a ROCm release not installed:
# /opt/rocm-6.2.0/lib/libamdhip64.so), as GNU ld, gold and clang's driver (lld) report it;
# (2) one symbol defined by two inputs, as GNU ld and lld report it.
# Writes rounds/d4/cases/real-link-missing-library-file.log and real-link-duplicate-symbol.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d4/cases
t=$(mktemp -d); cd "$t" || exit 1
export LANG=C
printf 'int hip_probe(void){return 1;}\nint main(void){return hip_probe();}\n' > main.c
{ gcc-12 main.c /opt/rocm-6.2.0/lib/libamdhip64.so -o probe
  gcc-12 -fuse-ld=gold main.c /opt/rocm-6.2.0/lib/libamdhip64.so -o probe
  clang-22 -fuse-ld=lld main.c /opt/rocm-6.2.0/lib/libamdhip64.so -o probe
} > "$cases/real-link-missing-library-file.log" 2>&1
printf 'int hip_probe(void){return 2;}\n' > probe.c
{ gcc-12 main.c probe.c -o probe; clang-22 -fuse-ld=lld main.c probe.c -o probe; } 2>&1 \
  | sed -E -e 's#/tmp/(cc|main-|probe-)[A-Za-z0-9-]+\.o#/tmp/\1XXXXXX.o#g' \
  > "$cases/real-link-duplicate-symbol.log"
cd / && rm -rf "$t"
