#!/usr/bin/env bash
# Evidence for devrt7's miopen-std-conversion rule (issue 40), made with the real g++ here:
# libstdc++'s std::sto* conversions throw with only the function's name as what(), the text
# MIOpen's API boundary prints after "MIOpen Error: " (ROCm/pytorch#2837 shows "MIOpen Error:
# stoul"). No MIOpen here, so no corpus case is written: the script prints the what() texts.
set -eu
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cat > "$t/sto.cpp" <<'CPP'
#include <cstdio>
#include <stdexcept>
#include <string>
int main() {
    const char *texts[] = {"gfx1151:xnack-", ""};
    for (const char *text : texts) {
        try { (void)std::stoul(text); } catch (const std::exception &e) { std::puts(e.what()); }
        try { (void)std::stoi(text); } catch (const std::exception &e) { std::puts(e.what()); }
    }
    return 0;
}
CPP
g++ -std=c++17 -o "$t/sto" "$t/sto.cpp"
"$t/sto"
