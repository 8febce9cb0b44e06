"""Value reading of the build-side shapes added for the misses of blind rounds r8 and r9:
CMake's deprecation error, unknown policy and non-existent target; sccache's own errors;
clang's error in backend; lld's stale version-script entries and a non-PIC object in a shared
library; a compiler driver's missing LLVM tool; apt's unmet ROCm dependencies; hipify's
leftover CUDA names, unknown argument, CUDA_HOME None and missing source; libstdc++'s
__failed_assertion overload. Each asserts the exact values read, and the look-alikes that
must claim nothing (or something else)."""

from __future__ import annotations

from rocmforge.triage import explain_text


def test_cmake_deprecation_error_names_the_file_and_cmake_minimum_required() -> None:
    d = explain_text("CMake Deprecation Error at cmake/deps.cmake:3 (cmake_minimum_required):\n"
                     "  Compatibility with CMake < 3.10 will be removed from a future version "
                     "of\n  CMake.\n", step="configure")
    assert (d.klass, d.subject, d.rule) == ("cmake", "cmake", "cmake-deprecation-error")
    assert "cmake_minimum_required in cmake/deps.cmake" in d.cause
    assert "raise the VERSION in that cmake_minimum_required" in d.fix


def test_cmake_deprecation_warning_claims_nothing() -> None:
    d = explain_text("CMake Deprecation Warning at CMakeLists.txt:1 (cmake_minimum_required):\n"
                     "  Compatibility with CMake < 3.10 will be removed from a future version "
                     "of\n  CMake.\n", step="configure")
    assert d.rule != "cmake-deprecation-error"
    assert not d.explained


def test_unknown_policy_is_read_into_cause_and_guard() -> None:
    d = explain_text("CMake Error at x.cmake:25 (cmake_policy):\n"
                     '  Policy "CMP0177" is not known to this version of CMake.\n')
    assert (d.klass, d.subject, d.rule) == ("cmake", "cmake", "cmake-policy-unknown")
    assert "does not know policy CMP0177" in d.cause
    assert "if(POLICY CMP0177)" in d.fix


def test_get_target_property_on_a_missing_target_claims_nothing() -> None:
    """The same line comes from a dependency left disabled (r8 TheRock#4571: missing-component)
    and from a subproject declared in the wrong order (r8 TheRock#3439: the project's CMake):
    it proves a target is undefined, not which of the two, so no class is claimed."""
    for target in ("rocm-smi", "roc::rocblas"):
        d = explain_text("CMake Error at cmake/sub.cmake:1169 (get_target_property):\n"
                         f'  get_target_property() called with non-existent target "{target}".\n')
        assert d.klass is None, (target, d.rule)


def test_sccache_own_error_is_compiler_cache_with_its_message() -> None:
    d = explain_text("sccache: encountered fatal error\n"
                     "sccache: error: Failed to parse included file path\n"
                     "sccache: caused by: Failed to parse included file path\n", step="build")
    assert (d.klass, d.subject, d.rule) == ("compiler-cache", "sccache", "sccache-fatal-error")
    assert "(Failed to parse included file path)" in d.cause
    assert "SCCACHE_DIRECT=false" in d.fix


def test_sccache_storage_timeout_keeps_its_own_answer() -> None:
    d = explain_text("sccache: error: Timed out waiting for server startup. Maybe the remote "
                     "service is unreachable?\n", step="build")
    assert d.rule == "sccache-storage-unreachable"


def test_show_stats_that_cannot_reach_the_server_claims_nothing() -> None:
    d = explain_text("+ sccache --show-stats\nsccache: error: Connection to server timed out\n",
                     step="build")
    assert d.rule != "sccache-fatal-error"
    assert not d.explained


def test_the_word_sccache_in_a_compiler_command_claims_nothing() -> None:
    d = explain_text("[12/900] /usr/bin/sccache /opt/rocm/llvm/bin/clang++ -c a.cpp -o a.o "
                     "-DERROR_SCCACHE=1\n", step="build")
    assert not d.explained


def test_error_in_backend_quotes_the_backend_diagnostic_before_it() -> None:
    d = explain_text("gemm/k.cpp:59:6: error: illegal VGPR to SGPR copy\n"
                     "fatal error: error in backend: Not supported instr: <MCInst 0>\n")
    assert (d.klass, d.subject, d.rule) == ("compiler-crash", "clang", "clang-backend-fatal")
    assert "error in backend ('Not supported instr: <MCInst 0>' after 'illegal VGPR to SGPR " \
           "copy')" in d.cause
    assert "newer ROCm" in d.fix


def test_error_in_backend_about_inline_asm_claims_no_crash() -> None:
    d = explain_text("fatal error: error in backend: invalid operand in inline asm: 'v_mov'\n")
    assert d.rule != "clang-backend-fatal"


def test_frontend_exit_70_says_frontend_and_upgrade() -> None:
    d = explain_text("clang++: error: clang frontend command failed with exit code 70 (use -v "
                     "to see invocation)\n")
    assert (d.klass, d.subject, d.rule) == ("compiler-crash", "clang", "compiler-crash")
    assert "in its frontend (cc1)" in d.cause
    assert "upgrade to another release of the compiler" in d.fix


def test_lld_stale_version_script_reads_library_and_script_from_the_command() -> None:
    log = ("clang++ -shared -Wl,--version-script=/src/rocr/src/hsacore.so.def -o "
           "libhsa-runtime64.so.1.13.0 a.o\n"
           "ld.lld: error: version script assignment of 'ROCR_1' to symbol 'hsa_gone' failed: "
           "symbol not defined\n")
    d = explain_text(log, step="build")
    assert (d.klass, d.subject, d.rule) == ("link", "libhsa-runtime64", "lld-undefined-version")
    assert "version script (hsacore.so.def) assigns ROCR_1 to hsa_gone" in d.cause
    assert "-Wl,--undefined-version" in d.fix


def test_lld_stale_version_script_without_a_command_line_names_the_symbol() -> None:
    d = explain_text("ld.lld: error: version script assignment of 'V1' to symbol 'f' failed: "
                     "symbol not defined\n")
    assert (d.subject, d.rule) == ("f", "lld-undefined-version")


def test_non_pic_object_in_a_shared_library_names_the_library() -> None:
    log = ("FAILED: lib/libggml_shared.so\n"
           "clang++ -shared -o lib/libggml_shared.so ggml.o k.cu.o\n"
           "ld.lld: error: relocation R_X86_64_32 cannot be used against local symbol; "
           "recompile with -fPIC\n"
           ">>> defined in k.cu.o\n>>> referenced by k.cu\n>>>               k.cu.o:(init)\n")
    d = explain_text(log, step="build")
    assert (d.klass, d.subject, d.rule) == ("link", "libggml_shared.so",
                                            "link-not-pic-lld-object")
    assert "k.cu.o, linked into the shared library libggml_shared.so" in d.cause
    assert "R_X86_64_32" in d.cause


def test_an_object_frame_without_the_relocation_error_claims_nothing() -> None:
    log = ("ld.lld: error: undefined symbol: foo\n>>> referenced by k.cu\n"
           ">>>               k.cu.o:(init)\n")
    assert explain_text(log).rule != "link-not-pic-lld-object"


def test_driver_missing_ld_lld_both_forms() -> None:
    old = explain_text('clang-14: error: unable to execute command: Executable "ld.lld" '
                       "doesn't exist!\n")
    assert (old.klass, old.subject, old.rule) == ("rocm-install", "ld.lld",
                                                  "driver-tool-missing")
    new = explain_text("clang-22: error: unable to execute command: posix_spawn failed: No "
                       "such file or directory\nclang-22: error: ld.lld command failed with "
                       "exit code 1 (use -v to see invocation)\n")
    assert (new.subject, new.rule) == ("ld.lld", "driver-tool-missing")


def test_a_linker_that_ran_and_failed_is_not_a_missing_tool() -> None:
    d = explain_text("ld.lld: error: undefined symbol: foo\n"
                     "clang-22: error: ld.lld command failed with exit code 1 (use -v to see "
                     "invocation)\n")
    assert d.rule != "driver-tool-missing"


def test_apt_unmet_rocm_dependency_names_package_and_versions() -> None:
    d = explain_text("The following packages have unmet dependencies:\n"
                     " rocm-hip-runtime : Depends: rocminfo (= 1.0.0.50400-72~22.04) but "
                     "5.0.0-1 is to be installed\n")
    assert (d.klass, d.subject, d.rule) == ("rocm-install", "rocminfo",
                                            "apt-rocm-unmet-dependency")
    assert "rocminfo = 1.0.0.50400-72~22.04, but apt chose rocminfo 5.0.0-1" in d.cause
    assert "Pin: origin repo.radeon.com" in d.fix


def test_apt_unmet_dependency_of_another_package_claims_nothing() -> None:
    d = explain_text(" libfoo-dev : Depends: libfoo1 (= 2.1-1) but 2.0-3 is to be installed\n")
    assert d.rule != "apt-rocm-unmet-dependency"
    rocks = explain_text(" rocksdb-tools : Depends: librocksdb8 (= 8.9-1) but 8.1-2 is to be "
                         "installed\n")
    assert rocks.rule != "apt-rocm-unmet-dependency"


def test_hipify_leftover_cuda_name_is_read_with_its_hip_spelling() -> None:
    d = explain_text("/src/include/utils/launch_hip.cuh:274:19: error: no member named "
                     "'get_cuda_check_suffix' in namespace 'c10::hip'; did you mean "
                     "'get_hip_check_suffix'?\n", step="build")
    assert (d.klass, d.subject, d.rule) == ("hipify", "launch_hip.cuh", "hipify-cuda-name-left")
    assert "get_cuda_check_suffix -> get_hip_check_suffix" in d.fix
    assert "cuda_to_hip_mappings.py" in d.fix


def test_a_did_you_mean_that_is_not_the_hip_spelling_claims_nothing() -> None:
    d = explain_text("a.cpp:3:9: error: no member named 'cudaFoo' in namespace 'c10::hip'; did "
                     "you mean 'cudaBar'?\n")
    assert d.rule != "hipify-cuda-name-left"


def test_hipify_unknown_argument_names_it() -> None:
    d = explain_text("TypeError: hipify() got an unexpected keyword argument "
                     "'hipify_extra_files_only'\n")
    assert (d.klass, d.subject, d.rule) == ("hipify", "hipify_python", "hipify-unknown-argument")
    assert "with hipify_extra_files_only" in d.cause


_CUDA_HOME = ('  File "op_builder/builder.py", line 750, in hipify_extension\n'
              '  File "op_builder/dc.py", line 32, in include_paths\n'
              "    return [os.path.join(torch.utils.cpp_extension.CUDA_HOME, 'include')]\n"
              '  File "<frozen posixpath>", line 76, in join\n'
              "TypeError: expected str, bytes or os.PathLike object, not NoneType\n")


def test_cuda_home_none_in_hipify_names_the_frame_that_used_it() -> None:
    d = explain_text(_CUDA_HOME)
    assert (d.klass, d.subject, d.rule) == ("hipify", "dc.py", "hipify-cuda-home-none")
    assert "ROCM_HOME" in d.fix


def test_none_in_a_path_join_outside_hipify_is_not_read_here() -> None:
    d = explain_text(_CUDA_HOME.replace("hipify_extension", "build_extension"))
    assert d.rule != "hipify-cuda-home-none"


def test_hipify_missing_source_from_an_sdist_says_so() -> None:
    d = explain_text("    with open(fin_path, encoding='utf-8') as fin:\n"
                     "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/pip-"
                     "install-x/pkg_1/csrc/scan/scan.cpp'\n")
    assert (d.klass, d.subject, d.rule) == ("hipify", "scan.cpp", "hipify-source-missing")
    assert "source distribution that leaves it out" in d.cause


def test_another_missing_file_is_not_hipify() -> None:
    d = explain_text("    with open(path) as f:\n"
                     "FileNotFoundError: [Errno 2] No such file or directory: '/src/a.cpp'\n")
    assert d.rule != "hipify-source-missing"


def test_failed_assertion_overload_is_libstdcxx() -> None:
    d = explain_text("/usr/include/c++/11.1.0/complex:703:7: error: __host__ __device__ function "
                     "'__failed_assertion' cannot overload __host__ function "
                     "'__failed_assertion'\n", step="build")
    assert (d.klass, d.subject, d.rule) == ("host-compiler", "libstdc++",
                                            "libstdcxx-assertion-overload")
    assert "__glibcxx_assert" in d.cause


def test_a_users_own_overload_clash_claims_nothing() -> None:
    d = explain_text("k.hip:9:1: error: __host__ __device__ function 'my_helper' cannot overload "
                     "__host__ function 'my_helper'\n")
    assert d.rule != "libstdcxx-assertion-overload"
