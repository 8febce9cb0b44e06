"""The compile and link rules widened for d10 (devq8): the same condition in the other tool's
words. Each test gives the wording as the real tool printed it here (tests/failures/make/
devq8.sh) and asserts the values read, and the look-alikes that stay declined."""

from __future__ import annotations

from rocmforge.triage import explain_text


def test_gcc_missing_standard_header_is_read_as_clangs_is() -> None:
    gcc = explain_text("bits.cpp:1:10: fatal error: cstdint: No such file or directory\n"
                       "    1 | #include <cstdint>\n"
                       "compilation terminated.\n")
    clang = explain_text("bits.cpp:1:10: fatal error: 'cstdint' file not found\n")
    assert (gcc.klass, gcc.subject, gcc.rule) == ("host-compiler", "libstdc++",
                                                  "std-header-missing-gcc")
    assert (clang.klass, clang.subject, clang.rule) == ("host-compiler", "libstdc++",
                                                        "std-header-missing")
    assert "'cstdint'" in gcc.cause and "libstdc++-N-dev" in gcc.cause
    assert "-nostdinc++" in gcc.fix


def test_gcc_standard_header_rule_declines_its_look_alikes() -> None:
    # a missing input file, and a -include without a source position: no #include failed
    for line in ("g++-12: error: vector: No such file or directory\n",
                 "cc1plus: fatal error: string: No such file or directory\n"):
        assert explain_text(line).rule != "std-header-missing-gcc"
    # a project's header (an extension) stays the missing-header rule's
    other = explain_text("a.cpp:1:10: fatal error: numa.h: No such file or directory\n")
    assert other.rule != "std-header-missing-gcc"
    assert other.klass == "missing-component"


def test_gold_not_pic_for_a_local_symbol_names_the_object_or_archive() -> None:
    obj = explain_text("/usr/bin/ld.gold: error: state.o: requires dynamic R_X86_64_32 reloc "
                       "which may overflow at runtime; recompile with -fPIC\n"
                       "collect2: error: ld returned 1 exit status\n")
    assert (obj.klass, obj.subject, obj.rule) == ("link", "state", "link-not-pic")
    assert "R_X86_64_32" in obj.cause
    member = explain_text("/usr/bin/ld.gold: error: lib/libfmt.a(format.o): requires dynamic "
                          "R_X86_64_PC32 reloc which may overflow at runtime; recompile with "
                          "-fPIC\n")
    assert (member.subject, member.rule) == ("libfmt", "link-not-pic")


def test_gold_names_a_colon_library_by_its_file() -> None:
    d = explain_text("/usr/bin/ld.gold: error: cannot find libamdhip64.so.6\n"
                     "collect2: error: ld returned 1 exit status\n")
    assert (d.klass, d.subject, d.rule) == ("link", "libamdhip64.so.6", "cannot-find-lib")
    assert "libamdhip64.so.6" in d.cause


def test_gnu_ld_gold_and_lld_give_one_subject_for_minus_l_colon() -> None:
    texts = ("/usr/bin/ld: cannot find -l:libamdhip64.so.6: No such file or directory\n",
             "/usr/bin/ld.gold: error: cannot find libamdhip64.so.6\n",
             "ld.lld: error: unable to find library -l:libamdhip64.so.6\n")
    found = [explain_text(text) for text in texts]
    assert [(d.klass, d.subject) for d in found] == [("link", "libamdhip64.so.6")] * 3
    assert found[2].rule == "lld-no-library" and "(lld)" in found[2].cause


def test_lld_still_declines_an_imported_target_and_libstdcxx() -> None:
    assert explain_text("ld.lld: error: unable to find library -lroc::rocblas\n"
                        ).rule != "lld-no-library"
    assert explain_text("ld.lld: error: unable to find library -lstdc++\n"
                        ).rule != "lld-no-library"


def test_gold_cannot_find_without_a_library_file_is_not_read() -> None:
    d = explain_text("/usr/bin/ld.gold: error: cannot find libamdhip64\n")
    assert d.rule != "cannot-find-lib"


def test_clang_ld_path_to_a_missing_file_is_a_missing_linker() -> None:
    d = explain_text("clang++-22: error: invalid linker name in argument "
                     "'--ld-path=/opt/llvm/bin/ld.lld'\n")
    assert (d.klass, d.subject, d.rule) == ("missing-component", "lld",
                                            "linker-program-missing")
    assert "--ld-path=/opt/llvm/bin/ld.lld" in d.cause
    mold = explain_text("clang++-22: error: invalid linker name in argument '-fuse-ld=mold'\n")
    assert (mold.subject, mold.rule) == ("mold", "linker-program-missing")


def test_clang_spawn_failure_names_ld_or_binutils_as_gcc_does() -> None:
    spawn = "clang-22: error: unable to execute command: posix_spawn failed: No such file or " \
            "directory\n"
    ld = explain_text(spawn + "clang-22: error: linker command failed with exit code 1 (use -v "
                      "to see invocation)\n")
    gcc_ld = explain_text("collect2: fatal error: cannot find \u2018ld\u2019\n")
    assert (ld.klass, ld.subject, ld.rule) == ("missing-component", "ld",
                                               "clang-spawn-linker-missing")
    assert (gcc_ld.klass, gcc_ld.subject) == (ld.klass, ld.subject)
    asm = explain_text(spawn + "clang-22: error: assembler command failed with exit code 1 (use "
                       "-v to see invocation)\n")
    gcc_as = explain_text("gcc-12: fatal error: cannot execute \u2018as\u2019: execvp: No such "
                          "file or directory\n")
    assert (asm.klass, asm.subject, asm.rule) == ("missing-component", "binutils",
                                                  "clang-spawn-linker-missing")
    assert (gcc_as.klass, gcc_as.subject) == (asm.klass, asm.subject)


def test_a_linker_that_ran_and_failed_is_not_a_missing_linker() -> None:
    d = explain_text("ld.lld: error: undefined symbol: foo()\n"
                     ">>> referenced by undef.cpp\n"
                     "clang++-22: error: linker command failed with exit code 1 (use -v to see "
                     "invocation)\n")
    assert (d.klass, d.rule) == ("link", "undefined-reference")
    bare = explain_text("clang-22: error: linker command failed with exit code 1 (use -v to see "
                        "invocation)\n")
    assert bare.rule != "clang-spawn-linker-missing"


def test_a_hipified_twin_is_read_from_gold_and_lld_as_from_gnu_ld() -> None:
    gnu = ("/usr/bin/ld.bfd: roi_align_hip.o: in function `roi_align_forward(int)':\n"
           "roi_align_hip.cpp:(.text+0x0): multiple definition of `roi_align_forward(int)'; "
           "roi_align.o:roi_align.cpp:(.text+0x0): first defined here\n")
    gold = ("/usr/bin/ld.gold: error: roi_align_hip.o: multiple definition of "
            "'roi_align_forward(int)'\n"
            "/usr/bin/ld.gold: roi_align.o: previous definition here\n")
    lld = ("ld.lld: error: duplicate symbol: roi_align_forward(int)\n"
           ">>> defined at roi_align.cpp\n"
           ">>>            roi_align.o:(roi_align_forward(int))\n"
           ">>> defined at roi_align_hip.cpp\n"
           ">>>            roi_align_hip.o:(.text+0x0)\n")
    for text in (gnu, gold, lld):
        d = explain_text(text)
        assert (d.klass, d.subject, d.rule) == ("link", "roi_align_forward(int)",
                                                "hipified-duplicate")
        assert "roi_align_hip" in d.cause and "FORCE_CUDA=1" in d.fix


def test_a_duplicate_without_a_hipified_twin_stays_a_plain_duplicate() -> None:
    lld = explain_text("ld.lld: error: duplicate symbol: pack(int)\n"
                       ">>> defined at pack.cpp\n"
                       ">>> defined at unpack.cpp\n")
    gold = explain_text("/usr/bin/ld.gold: error: unpack.o: multiple definition of 'pack(int)'\n")
    assert (lld.rule, gold.rule) == ("link-duplicate-symbol", "link-duplicate-symbol")
    # a "defined at" line of a _hip file with no duplicate above it names no symbol
    assert explain_text(">>> defined at roi_align_hip.cpp\n").rule != "hipified-duplicate"


def test_gcc_words_for_alignas_after_a_gnu_attribute() -> None:
    gcc = explain_text("shared.cpp:3:26: error: standard attributes in middle of "
                       "decl-specifiers\n"
                       "    3 | void f() { static SHARED alignas(16) D smem[4]; }\n")
    clang = explain_text("shared.cpp:3:26: error: 'alignas' attribute cannot be applied to "
                         "types\n")
    assert (gcc.klass, gcc.subject, gcc.rule) == ("host-compiler", "gcc", "attribute-on-type")
    assert (clang.klass, clang.subject, clang.rule) == ("host-compiler", "clang",
                                                        "attribute-on-type")
    assert "GCC 12" in gcc.cause and "front of the declaration" in gcc.fix
    # g++-11's warning for the same code stops nothing
    assert explain_text("shared.cpp:3:26: warning: attribute ignored [-Wattributes]\n"
                        ).rule != "attribute-on-type"


def test_clangs_hip_driver_options_given_to_gcc() -> None:
    for flag in ("--cuda-device-only", "--offload-host-only", "-fno-gpu-rdc", "-nogpulib",
                 "-munsafe-fp-atomics", "--hip-path=/opt/rocm"):
        d = explain_text(f"g++-12: error: unrecognized command-line option \u2018{flag}\u2019\n")
        assert (d.klass, d.subject, d.rule) == ("host-compiler", "gcc", "hip-flag-to-gcc"), flag
        assert flag in d.cause
    # a GCC option unknown to this GCC is no HIP flag
    other = explain_text("g++-12: error: unrecognized command-line option \u2018-fno-such\u2019\n")
    assert other.rule == "compiler-option-unknown"
