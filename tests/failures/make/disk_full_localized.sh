#!/usr/bin/env bash
# disk-full: the compile's output lands on a full device (/dev/full: every write is ENOSPC),
# with the UI in Russian and in German (locales made with localedef into a temp LOCPATH;
# glibc's libc.mo translates strerror): GNU as and cp print the translated text.
# Writes rounds/d4/cases/real-disk-full-localized-ru.log and real-disk-full-localized-de.log
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d4/cases
t=$(mktemp -d)
echo 'int main() { return 0; }' > "$t/Allocator.cpp"
for l in ru_RU de_DE; do
  localedef -i $l -f UTF-8 "$t/$l.UTF-8" >/dev/null 2>&1
  short=${l%_*}
  (cd "$t" && LOCPATH="$t" LC_ALL=$l.UTF-8 g++-12 -c Allocator.cpp -o /dev/full 2>&1
   LOCPATH="$t" LC_ALL=$l.UTF-8 cp Allocator.cpp /dev/full 2>&1) \
    | sed -E "s#/tmp/cc[A-Za-z0-9]+\.s#/tmp/ccXXXXXX.s#g" > "$cases/real-disk-full-localized-$short.log"
done
rm -rf "$t"
