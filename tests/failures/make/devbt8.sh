#!/usr/bin/env bash
# Loader message families of issue 40 (r16 after, devbt8), made with the real programs:
#  - glibc's loader on a shared library whose LOAD segment's file offset was shifted by 8
#    bytes (p_vaddr - p_offset no longer a multiple of the page size, the damage a bad strip
#    does): "ELF load command address/offset not page-aligned", through the loader of a
#    program (import: elf-load-segment-misaligned)
#  - Python's ctypes loading libwidget.so, linked (g++-12 -shared) without the definition of
#    its own widget::helper: "undefined symbol: _ZN6widget6helperEi" (import: undefined-symbol,
#    the library's own namespace)
#  - clang++-22 -x hip --cuda-host-only on a ck_tile:: functor: "reference to local variable
#    'k' declared in enclosing function 'ck_tile::…'" (composable-kernel: ck-error-named)
# Needs gcc-12, g++-12, clang++-22 and python3 with pyelftools. Writes rounds/d10/cases/real-*.log (the
# .toml answers are committed beside them).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d10/cases
t=$(mktemp -d)
echo 'int f(void) { return 1; }' > "$t/u.c"
printf 'int f(void);\nint main(void) { return f() - 1; }\n' > "$t/m.c"
(cd "$t" && gcc-12 -shared -fPIC -o libunw.so.9 u.c &&
  gcc-12 -o app m.c -L. -l:libunw.so.9 -Wl,-rpath,'$ORIGIN') || exit 1
python3 - "$t/libunw.so.9" <<'PY'
import struct, sys
from elftools.elf.elffile import ELFFile
path = sys.argv[1]
with open(path, "rb") as handle:
    elf = ELFFile(handle)
    start, size = elf["e_phoff"], elf["e_phentsize"]
    index = next(i for i, seg in enumerate(elf.iter_segments())
                 if seg["p_type"] == "PT_LOAD" and seg["p_offset"] > 0)
data = bytearray(open(path, "rb").read())
at = start + index * size + 8  # Elf64_Phdr.p_offset
struct.pack_into("<Q", data, at, struct.unpack_from("<Q", data, at)[0] + 8)
open(path, "wb").write(bytes(data))
PY
(cd "$t" && ./app 2>&1) > "$cases/real-loader-load-segment-offset-not-page-aligned.log"
echo 'namespace widget { int helper(int); int api(int x) { return helper(x) + 1; } }' \
  > "$t/w.cpp"
(cd "$t" && g++-12 -shared -fPIC -o libwidget.so w.cpp &&
  python3 -c 'import ctypes; ctypes.CDLL("./libwidget.so")' 2>&1) \
  > "$cases/real-ctypes-own-namespace-undefined-symbol.log"
# clang++-22's HIP host pass on a ck_tile-namespace functor whose local class reads a local
# of the enclosing function (the shape of CK's FastGeluAsm, pytorch/pytorch#192650)
cat > "$t/scale.hip" <<'CPP'
namespace ck_tile {
struct Scale {
  template <typename T> T operator()(T x) const {
    const float k = 0.5f;
    struct Inner { static float get() { return k; } };
    return x * Inner::get();
  }
};
}
float use(float v) { return ck_tile::Scale{}(v); }
CPP
(cd "$t" && clang++-22 -x hip -nogpulib -nogpuinc --cuda-host-only -fsyntax-only scale.hip \
  2>&1) > "$cases/real-clang-hip-host-ck-tile-local-in-enclosing-function.log"
rm -rf "$t"
