#!/usr/bin/env bash
# link: a static library compiled without -fPIC linked into a shared library, by GNU ld,
# gold and lld (gcc-12 -fuse-ld=gold, clang-22 -fuse-ld=lld), as a ROCm extension or torch
# library linking a distribution's static archive would.
# Writes rounds/d4/cases/real-link-not-pic-{bfd,gold,lld}.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d4/cases
t=$(mktemp -d); cd "$t" || exit 1
mkdir -p third_party/lib
printf 'int fmt_state; int fmt_format(void){return fmt_state;}\n' > format.c
gcc-12 -O2 -fno-pic -c format.c -o format.o && ar rcs third_party/lib/libfmt.a format.o
printf 'int fmt_format(void); int torch_log(void){return fmt_format();}\n' > logging.c
gcc-12 -fPIC -c logging.c -o logging.o
export LANG=C
gcc-12 -shared -o libc10.so logging.o -Lthird_party/lib -lfmt > "$cases/real-link-not-pic-bfd.log" 2>&1
gcc-12 -fuse-ld=gold -shared -o libc10.so logging.o -Lthird_party/lib -lfmt > "$cases/real-link-not-pic-gold.log" 2>&1
clang-22 -fuse-ld=lld -shared -o libc10.so logging.o -Lthird_party/lib -lfmt > "$cases/real-link-not-pic-lld.log" 2>&1
cd / && rm -rf "$t"
