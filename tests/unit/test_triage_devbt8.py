"""Build-side families of r16's misses (issue 40, devbt8), read from the programs' own
wordings: glibc's loader refusing a LOAD segment (its offset damaged after the link, or aligned
for a smaller page), a library whose own namespace's symbol is undefined when it is loaded,
MSVC's unresolved external of a torch function imported from torch's DLLs, clang's errors
that quote a Composable Kernel declaration (also wrapped onto the next line), a run-time
compile failing inside the libstdc++ headers HIP's hip_runtime.h includes, and libc++ as a
way out of libstdc++'s assertions in device code. Each line is what the program prints, with
the values the reading must take out of it, and the look-alikes that must claim nothing (or
not this)."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text
from rocmforge.triage.parsers.library_file import own_namespace

# glibc 2.36's loader, reproduced here (make/devbt8.sh)
_LOAD_OFFSET = ("./app: error while loading shared libraries: libunw.so.9: ELF load command "
                "address/offset not page-aligned\n")
# the older glibc wording of the same check, through Python's ctypes
_LOAD_OFFSET_OLD = ("OSError: /opt/rocm/lib/librocprof-sys.so.1: ELF load command "
                    "address/offset not properly aligned\n")
_LOAD_ALIGN = ("./tidal_connect: error while loading shared libraries: libsystemd.so.0: ELF "
               "load command alignment not page-aligned\n")
_LNK_TORCH = ('error LNK2001: unresolved external symbol "__declspec(dllimport) public: '
              '__cdecl c10::ValueError::ValueError(struct c10::SourceLocation,class '
              'std::basic_string<char,struct std::char_traits<char>,class std::allocator<char> '
              '>)" (__imp_??0ValueError@c10@@QEAA@USourceLocation@1@V?$basic_string@DU?$char_'
              'traits@D@std@@V?$allocator@D@2@@std@@@Z)\n')
_LNK_C10_HIP = ('ext.obj : error LNK2019: unresolved external symbol "__declspec(dllimport) '
                'int __cdecl c10::hip::device_count(void)" (__imp_?device_count@hip@c10@@YAHXZ) '
                'referenced in function main\n')
# clang++-22's HIP host pass on a ck_tile:: functor (make/devbt8.sh)
_CK_NAMED = ("scale.hip:5:48: error: reference to local variable 'k' declared in enclosing "
             "function 'ck_tile::Scale::operator()<float>'\n")
_CK_WRAPPED = ("error: reference to local variable 'c1' declared in enclosing function\n"
               "       'ck_tile::element_wise::FastGeluAsm::operator()<float, float>'\n"
               "2 errors generated when compiling for host.\n")
_CHAIN = ("In file included from /tmp/comgr-a8ec8e/input/naive_conv.cpp:1:\n"
          "In file included from /opt/rocm-5.2.3/include/hip/hip_runtime.h:54:\n"
          "In file included from /usr/lib/gcc/x86_64-pc-linux-gnu/12.2.0/../../../../include/"
          "c++/12.2.0/thread:44:\n"
          "/usr/lib/gcc/x86_64-pc-linux-gnu/12.2.0/../../../../include/c++/12.2.0/new:153:6: "
          "note: non-usual 'operator delete' declared here\n")
_COMGR = ("MIOpen(HIP): Error [Do] 'amd_comgr_do_action(kind, handle, in.GetHandle(), "
          "out.GetHandle())' AMD_COMGR_ACTION_COMPILE_SOURCE_TO_BC: ERROR (1)\n")
_GLIBCXX_ASSERT = ("/usr/include/c++/14/optional:482:2: error: reference to __host__ function "
                   "'__glibcxx_assert_fail' in __host__ __device__ function\n")


@pytest.mark.parametrize(("text", "step", "klass", "subject", "rule", "words"), [
    (_LOAD_OFFSET, "verify", "import", "libunw.so.9", "elf-load-segment-misaligned",
     ("refuses libunw.so.9", "file offset", "intact libunw.so.9", "readelf -lW")),
    (_LOAD_OFFSET_OLD, "verify", "import", "librocprof-sys.so.1",
     "elf-load-segment-misaligned", ("/opt/rocm/lib/librocprof-sys.so.1", "strip")),
    (_LOAD_ALIGN, "verify", "import", "libsystemd.so.0", "elf-load-segment-misaligned",
     ("smaller memory page", "max-page-size=65536", "getconf PAGESIZE")),
    (_LNK_TORCH, "build", "link", "c10::ValueError::ValueError", "linker-undefined-symbol",
     ("MSVC's link.exe", "c10.lib", "dumpbin /exports <site-packages>/torch/lib/c10.lib")),
    (_LNK_C10_HIP, "build", "link", "c10::hip::device_count", "linker-undefined-symbol",
     ("c10_hip.lib",)),
    (_CK_NAMED, "build", "composable-kernel", "composable_kernel", "ck-error-named",
     ("ck_tile::Scale::operator()<float>",
      "('reference to local variable 'k' declared in enclosing function')", "CK (ck_tile)",
      "USE_ROCM_CK_SDPA=0")),
    (_CK_WRAPPED, "build", "composable-kernel", "composable_kernel", "ck-error-named",
     ("ck_tile::element_wise::FastGeluAsm::operator()<float, float>",
      "'reference to local variable 'c1' declared in enclosing function'")),
    (_COMGR + _CHAIN, "verify", "host-compiler", "libstdc++", "hip-runtime-libstdcxx-rejected",
     ("host GCC 12 libstdc++", "hip/hip_runtime.h", "--gcc-install-dir",
      "supports GCC 12's headers")),
    (_GLIBCXX_ASSERT, "build", "host-compiler", "libstdc++", "host-function-in-device",
     ("__glibcxx_assert_fail", "-stdlib=libc++", "-D_GLIBCXX_ASSERTIONS")),
])
def test_family_reads_its_values(text: str, step: str, klass: str, subject: str, rule: str,
                                 words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words, step=step)


@pytest.mark.parametrize(("text", "step"), [
    # clang's notes and warnings that name CK code: nothing failed on these lines
    ("scale.hip:10:45: note: in instantiation of function template specialization "
     "'ck_tile::Scale::operator()<float>' requested here\n", "build"),
    ("gemm.hip:3:1: warning: unused function 'ck::make_tuple' [-Wunused-function]\n", "build"),
    # a CK name wrapped after a note, not after an error
    ("note: in instantiation of function template specialization\n"
     "      'ck_tile::Scale::operator()<float>' requested here\n", "build"),
    # libstdc++ reached from hip_runtime.h in a project's own compile (no run-time compile)
    (_CHAIN.replace("/tmp/comgr-a8ec8e/input/", "src/"), "build"),
    # ... or after an error in the compiled source itself: libstdc++'s note is about that
    (_COMGR + "naive_conv.cpp:12:3: error: no matching function for call to 'max'\n" + _CHAIN,
     "verify"),
    # the loader's message named in a search or a changelog line, with no library
    ("grep -r 'ELF load command address/offset not page-aligned' docs/\n", "verify"),
])
def test_look_alikes_claim_nothing(text: str, step: str) -> None:
    assert explain_text(text, step=step).klass is None


# The loader prints the mangled name (`OSError: ./libwidget.so: undefined symbol:
# _ZN6widget6helperEi`, make/devbt8.sh; the corpus case reads that whole line): demangling
# loads libstdc++ through ctypes, which unit tests may not, so the reading is tested on the
# demangled name the rule passes it.
def test_own_namespace_names_the_library() -> None:
    found = own_namespace("libwidget.so", "widget::helper(int)")
    assert found is not None
    assert found.subject == "libwidget.so"
    for word in ("needs widget::helper,", "own namespace widget::", "-Wl,--no-undefined",
                 "the widget library's target"):
        assert word in found.cause + " " + found.fix, word


@pytest.mark.parametrize(("library", "symbol"), [
    ("libwidget.so.2", "gadget::helper(int)"),  # another library's namespace
    ("libwidget_gpu.so", "widget::helper(int)"),  # a sibling library's namespace
    ("libwidget.so", "widget_helper"),  # a C function: no namespace to own
    ("widget.so", "widget::helper(int)"),  # not a lib<name>.so
])
def test_other_namespaces_are_not_the_library_gap(library: str, symbol: str) -> None:
    assert own_namespace(library, symbol) is None


def test_torch_symbol_not_imported_keeps_the_general_link_reading() -> None:
    # a static (not dllimport) reference: torch's import libraries are not what is missing
    text = ('main.obj : error LNK2019: unresolved external symbol "void __cdecl c10::foo(void)" '
            '(?foo@c10@@YAXXZ) referenced in function main\n')
    found = explain_text(text, step="build")
    assert (found.klass, found.subject, found.rule) == ("link", "c10::foo",
                                                        "linker-undefined-symbol")
    assert "import libraries" not in found.cause
