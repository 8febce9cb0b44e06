"""Issue 40, d11 (rv10): look-alikes of the rules added or widened on 2026-12-05 that made
them claim wrongly, each beside the right twin that must still be read. The lines are
cmake 3.25's, gcc-12/g++-12's (ld), ldd's and TheRock's test runner's own words, produced
by tests/failures/make/rv10.sh where a program here prints them."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmforge.errors import ConfigError
from rocmforge.triage import explain_text
from rocmforge.triage.engine import diagnose
from rocmforge.triage.table import load_signatures

CASES = Path(__file__).resolve().parents[1] / "failures" / "rounds" / "d11" / "cases"


def _outcome(text: str, step: str = "") -> tuple[str | None, str, str]:
    d = explain_text(text, step)
    return d.klass, d.subject, d.rule


def _probe(compile_or_link: str, error: str) -> str:
    """CMake 3.25's CMakeError.log around one command and its error (make/rv10.sh)."""
    return ("Change Dir: /home/user/proj/build/CMakeFiles/CMakeScratch/TryCompile-x\n\n"
            "Run Build Command(s):/usr/bin/gmake -f Makefile cmTC_0/fast\n"
            f"{compile_or_link}\n{error}\n"
            "gmake: *** [Makefile:127: cmTC_0/fast] Error 2\n")


_FLAG_PROBE = ("/usr/bin/g++-12 -DHAS_OFFLOAD_ARCH  {flag} -o CMakeFiles/cmTC_0.dir/src.cxx.o -c "
               "/home/user/proj/build/CMakeFiles/{folder}/src.cxx")
_COMPILER_CHECK = ("/usr/bin/g++-12   {flag}  -o CMakeFiles/cmTC_0.dir/testCXXCompiler.cxx.o -c "
                   "/home/user/proj/build/CMakeFiles/CMakeScratch/TryCompile-x/"
                   "testCXXCompiler.cxx")
_GCC_REFUSES = "g++-12: error: unrecognized command-line option '{flag}'"


@pytest.mark.parametrize("flag", ["--offload-arch=gfx1100", "-munsafe-fp-atomics", "-fgpu-rdc"])
@pytest.mark.parametrize("folder", ["CMakeScratch/TryCompile-x", "CMakeTmp"])
def test_a_flag_probe_refused_by_gcc_claims_nothing(flag: str, folder: str) -> None:
    text = _probe(_FLAG_PROBE.format(flag=flag, folder=folder), _GCC_REFUSES.format(flag=flag))
    assert _outcome(text) == (None, "", "")


@pytest.mark.parametrize("flag", ["--offload-arch=gfx1100", "-munsafe-fp-atomics"])
def test_the_compiler_check_given_a_hip_flag_is_still_gcc(flag: str) -> None:
    text = _probe(_COMPILER_CHECK.format(flag=flag), _GCC_REFUSES.format(flag=flag))
    assert _outcome(text) == ("host-compiler", "gcc", "hip-flag-to-gcc")
    # and outside any CMake check: a build's own compile line
    assert _outcome("/usr/bin/g++-12 -c kernel.cpp\n" + _GCC_REFUSES.format(flag=flag)) == (
        "host-compiler", "gcc", "hip-flag-to-gcc")


_LIB_PROBE = ("/usr/bin/gcc-12  -DCHECK_FUNCTION_EXISTS=pthread_create "
              "CMakeFiles/cmTC_0.dir/CheckFunctionExists.c.o -o cmTC_0  -l{lib}")
_LIB_CHECK = "/usr/bin/gcc-12 -l{lib}  CMakeFiles/cmTC_0.dir/testCCompiler.c.o -o cmTC_0"
_LD_MISSES = "/usr/bin/ld: cannot find -l{lib}: No such file or directory"


@pytest.mark.parametrize("lib", ["pthreads", "rocblas"])
def test_check_library_exists_failing_claims_nothing(lib: str) -> None:
    text = _probe(_LIB_PROBE.format(lib=lib), _LD_MISSES.format(lib=lib))
    assert _outcome(text) == (None, "", "")


def test_the_compiler_check_missing_a_library_is_still_read() -> None:
    text = _probe(_LIB_CHECK.format(lib="rocblas"), _LD_MISSES.format(lib="rocblas"))
    assert _outcome(text) == ("link", "librocblas", "cannot-find-lib")


_SHARED = ("/usr/bin/ld: {lib}: undefined reference to `{sym}'\n"
           "collect2: error: ld returned 1 exit status")
_PLAIN_TEMPLATE = "void fa_vec_case<128, 2>(float*)"


@pytest.mark.parametrize("lib", [
    "/home/u/miniconda3/envs/rocm/lib/libfa.so.1",
    "/home/u/anaconda3/lib/libfa.so",
    "/home/u/miniforge3/envs/x/lib/libfa.so.2",
    "/home/u/.venvs/x/envs/y/lib/libfa.so",
    "/nix/store/1x2y3z-fa-1.0/lib/libfa.so",
])
def test_a_library_of_an_environment_prefix_is_not_the_builds_own(lib: str) -> None:
    assert _outcome(_SHARED.format(lib=lib, sym=_PLAIN_TEMPLATE)) == (None, "", "")


@pytest.mark.parametrize("sym", [
    "void fmt::v9::detail::vformat_to<char>(fmt::v9::detail::buffer<char>&, char const*)",
    "void absl::lts_20230802::log_internal::MakeCheckOpString<long, long>(long, long, char "
    "const*)",
    "void tbb::detail::r1::execute_and_wait<int>(int&)",
])
def test_a_versioned_namespace_template_is_another_librarys_release(sym: str) -> None:
    assert _outcome(_SHARED.format(lib="build/lib/libapp.so", sym=sym)) == (None, "", "")


def test_the_builds_own_library_missing_its_template_instance_is_still_read() -> None:
    text = _SHARED.format(lib="../bin/libfa.so.0.1", sym=_PLAIN_TEMPLATE)
    assert _outcome(text) == ("link", "fa_vec_case", "shared-library-template-instance")


_LDD = "undefined symbol: {sym}\t(./ext.cpython-311-x86_64-linux-gnu.so)"


@pytest.mark.parametrize("sym", ["PyLong_FromLong", "PyModule_Create2", "_Py_Dealloc"])
def test_ldd_r_listing_cpython_names_claims_nothing(sym: str) -> None:
    text = "$ ldd -r ./ext.cpython-311-x86_64-linux-gnu.so\n\tstatically linked\n" + \
        _LDD.format(sym=sym)
    assert _outcome(text) == (None, "", "")


def test_the_loader_missing_a_cpython_name_is_still_read() -> None:
    text = ("ImportError: /x/ext.cpython-312-x86_64-linux-gnu.so: undefined symbol: "
            "PyType_FromMetaclass")
    assert _outcome(text, "verify")[2] == "undefined-symbol-python-c-api"


@pytest.mark.parametrize("text", [
    "main.cpp:(.text+0x5): warning: undefined reference to `foo()'",
    "ld.lld: warning: undefined symbol: foo()\n>>> referenced by main.cpp",
])
def test_a_linker_warning_for_an_undefined_name_claims_nothing(text: str) -> None:
    assert _outcome(text) == (None, "", "")


def test_the_linkers_errors_for_an_undefined_name_are_still_read() -> None:
    assert _outcome("main.cpp:(.text+0x5): undefined reference to `foo()'")[:2] == ("link", "foo()")
    assert _outcome("ld.lld: error: undefined symbol: foo()\n>>> referenced by main.cpp")[0] == \
        "link"


_LLD_DUP = ("ld.lld: error: duplicate symbol: foo()\n>>> defined at {a}.cpp\n"
            ">>>            {a}.o:(foo())\n>>> defined at {b}.cpp\n"
            ">>>            {b}.o:(.text+0x0)")
_LD_DUP = ("/usr/bin/ld: {b}.o: in function `foo()':\n{b}.cpp:(.text+0x0): multiple definition "
           "of `foo()'; {a}.o:{a}.cpp:(.text+0x0): first defined here")


@pytest.mark.parametrize("form", [_LLD_DUP, _LD_DUP])
def test_two_different_hip_sources_are_no_hipify_twins(form: str) -> None:
    assert _outcome(form.format(a="a_hip", b="b_hip")) == ("link", "foo", "link-duplicate-symbol")


@pytest.mark.parametrize("form", [_LLD_DUP, _LD_DUP])
def test_a_source_and_its_hipified_copy_are_still_twins(form: str) -> None:
    assert _outcome(form.format(a="roi_align", b="roi_align_hip")) == (
        "link", "foo()", "hipified-duplicate")


_MISMATCH = ("[ERROR] PyTorch version mismatch!\n"
             "  Test sources: 2.9 (from /src/pytorch/version.txt: 2.9.0a0)\n"
             "  Installed wheel: 2.10 (2.10.0+rocm7.1)\n")


def test_therock_mismatch_bypassed_by_its_flag_claims_nothing() -> None:
    text = (_MISMATCH + "[WARNING] allow_mismatch (--allow-version-mismatch) was set, so "
            "continuing anyway\n\nFAILED test/test_nn.py::TestNN::test_conv - AssertionError\n")
    assert _outcome(text) == (None, "", "")


def test_therock_mismatch_that_exits_is_still_read() -> None:
    text = (_MISMATCH + "[ERROR] Set allow_mismatch (--allow-version-mismatch) to bypass this "
            "check. Exiting\n")
    assert _outcome(text) == ("python-packaging", "torch", "therock-torch-test-sources-mismatch")


def test_makes_missing_hipcc_names_a_missing_interpreter_too() -> None:
    d = explain_text("make: hipcc: No such file or directory\nmake: *** [Makefile:2: all] "
                     "Error 127")
    assert (d.klass, d.rule) == ("rocm-install", "hip-compiler-not-found")
    assert "the interpreter its first line names" in d.cause
    assert "head -1 $(command -v hipcc)" in d.fix


# Look-alikes the review tried on rules it kept: each already claims nothing.
@pytest.mark.parametrize("text", [
    # torch's own warning when NumPy 2 meets a torch built for 1.x (it goes on without NumPy)
    "UserWarning: Failed to initialize NumPy: _ARRAY_API not found (Triggered internally at "
    "../torch/csrc/utils/tensor_numpy.cpp:84.)",
    # a grep of the hipcc message, not make's own line
    "+ grep 'hipcc: No such file or directory' build.log",
    # clr's other comgr message: a comgr too old for the runtime, not comgr missing
    "comgrctx.cpp:50: Failed to load COMGR function amd_comgr_foo",
    # setuptools' spawn refusing hipcc for another reason than a missing file
    "error: command '/opt/rocm/bin/hipcc' failed: Permission denied",
    # CK's own header giving a warning, not an error
    "/opt/rocm/include/ck/utility/amd_buffer_addressing.hpp:32:5: warning: unused variable 'x' "
    "in 'ck::foo' [-Wunused-variable]",
])
def test_kept_rules_look_alikes_claim_nothing(text: str) -> None:
    assert _outcome(text) == (None, "", "")


@pytest.mark.parametrize("name", sorted(p.stem for p in CASES.glob("*.toml")))
def test_each_d11_case_reads_as_recorded(name: str) -> None:
    import tomllib
    answer = tomllib.loads((CASES / f"{name}.toml").read_text())
    klass, subject, _ = _outcome((CASES / f"{name}.log").read_text())
    assert (klass or "", subject if klass else "") == (answer["class"], answer["subject"])


_TABLE = """
[[signature]]
id = "x"
class = "cmake"
subject = "{what}"
pattern = 'boom (?P<what>\\w+)'
unless = '^going on anyway$'
cause = "it went {what}"
fix = "stop {what}"
source = "test"
"""


def test_a_signatures_unless_line_voids_its_claim(tmp_path: Path) -> None:
    (tmp_path / "diagnostics.toml").write_text(_TABLE, encoding="utf-8")
    rules = tuple(s.as_rule() for s in load_signatures(str(tmp_path)))
    assert diagnose(["a", "boom bang"], rules).cause == "it went bang"
    assert diagnose(["a", "boom bang", "going on anyway"], rules).klass is None


def test_a_signatures_bad_unless_regex_is_named(tmp_path: Path) -> None:
    (tmp_path / "diagnostics.toml").write_text(_TABLE.replace("^going", "(going"),
                                               encoding="utf-8")
    with pytest.raises(ConfigError, match=r"#1 \(x\)\.unless is not a valid Python regular"):
        load_signatures(str(tmp_path))
