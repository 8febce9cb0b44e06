"""Families read in the other wordings their programs really print (issue 40): each line here is
a real variant (its source beside it) of a family the rules knew in one wording, or a look-alike
(a logger's non-failure level, a program that is not a compiler) that must claim nothing."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    # GCC's collect_wait (collect-utils.c, lto-wrapper.c): the program as run, a full path for
    # lto-wrapper's driver, ", core dumped" after
    ("lto-wrapper: fatal error: /usr/bin/c++ terminated with signal 9 [Killed]",
     "out-of-memory", "c++", "compiler-killed", ("compiler", "memory")),
    ("collect2: fatal error: /usr/bin/x86_64-linux-gnu-ld.gold terminated with signal 9 "
     "[Killed], core dumped", "out-of-memory", "x86_64-linux-gnu-ld.gold", "compiler-killed",
     ("linker", "lld")),
    # torch's _load_dll_libraries appends 'Error loading "<dll>" …' to ctypes.WinError's text,
    # which is in the UI language: the code tells the cause
    ("OSError: [WinError 127] The specified procedure could not be found. Error loading "
     "\"C:\\v\\Lib\\site-packages\\torch\\lib\\torch_python.dll\" or one of its dependencies.",
     "import", "torch_python.dll", "windows-dll-load", ("WinError 127", "mixed")),
    ("OSError: [WinError 127] La procédure spécifiée est introuvable. Error loading "
     "\"E:\\v\\lib\\site-packages\\torch\\lib\\cudnn_adv_infer64_8.dll\" or one of its "
     "dependencies.", "import", "cudnn_adv_infer64_8.dll", "windows-dll-load", ("WinError 127",)),
    ("OSError: [WinError 1114] 动态链接库(DLL)初始化例程失败。 Error loading \"C:\\Program Files\\"
     "Python311\\Lib\\site-packages\\torch\\lib\\c10.dll\" or one of its dependencies.",
     "import", "c10.dll", "windows-dll-load", ("WinError 1114", "vc_redist")),
    ("OSError: [WinError 193] %1 is not a valid Win32 application. Error loading \"C:\\P\\"
     "Python39\\lib\\site-packages\\torch\\lib\\caffe2_detectron_ops.dll\" or one of its "
     "dependencies.", "import", "caffe2_detectron_ops.dll", "windows-dll-load",
     ("WinError 193", "64-bit")),
    # the same with the "[WinError N]" prefix cut: the English text tells the code
    ("The specified procedure could not be found. Error loading \"C:\\v\\torch\\lib\\c10.dll\" "
     "or one of its dependencies.", "import", "c10.dll", "windows-dll-load", ("WinError 127",)),
    # glibc's dynamic loader: static TLS used up, an executable stack refused (glibc 2.41)
    ("OSError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS "
     "block", "import", "libgomp.so.1", "dlopen-static-tls", ("LD_PRELOAD",)),
    ("ImportError: dlopen: cannot load any more object with static TLS", "import",
     "static TLS", "dlopen-static-tls", ("import torch",)),
    ("ImportError: libctranslate2-bc15bf3f.so.4.5.0: cannot enable executable stack as shared "
     "object requires: Invalid argument", "import", "libctranslate2-bc15bf3f.so.4.5.0",
     "dlopen-exec-stack", ("2.41", "noexecstack", "glibc.rtld.execstack=2")),
    # clang's driver with the in-process cc1: 128 + the signal (llvm/llvm-project issues),
    # 3 (abort) and NTSTATUS codes on Windows; strsignal's other names
    ("clang++: error: clang frontend command failed with exit code 139 (use -v to see "
     "invocation)", "compiler-crash", "clang", "compiler-crash", ("crashed",)),
    ("clang++: error: clang frontend command failed with exit code -1073741819 (use -v to see "
     "invocation)", "compiler-crash", "clang", "compiler-crash", ("crashed",)),
    ("clang-17: error: unable to execute command: Aborted (core dumped)", "compiler-crash",
     "clang", "compiler-crash", ("crashed",)),
    # Windows' ERROR_DISK_FULL as Python prints it (the text is in the UI language)
    ("OSError: [WinError 112] There is not enough space on the disk", "disk-full", "disk",
     "disk-full", ("df -h",)),
    ("error MSB3491: Could not write lines to file \"x.tlog\". There is not enough space on the "
     "disk.", "disk-full", "disk", "disk-full", ("free space",)),
    # FindPackageHandleStandardArgs' unsuitable version (Kitware/CMake Modules/
    # FindPackageHandleStandardArgs.cmake): the version found read, the one required when the
    # line holds it
    ("CMake Error at /usr/share/cmake-3.28/Modules/FindPackageHandleStandardArgs.cmake:230 "
     "(message):\n  Could NOT find rocprim: Found unsuitable version \"2.10.9\", but required "
     "is\n  at least \"3.0.0\" (found /opt/rocm/include)", "missing-component", "rocprim",
     "cmake-could-not-find", ("2.10.9", "--rocm-path")),
    ("CMake Error at /usr/share/cmake-3.28/Modules/FindPackageHandleStandardArgs.cmake:230 "
     "(message):\n  Could NOT find Python: Found unsuitable version \"3.8.10\", but required is "
     "at least \"3.9\" (found /usr/bin/python3)", "missing-component", "python",
     "cmake-could-not-find", ("3.8.10", "requires 3.9", "Python_ROOT")),
    # uv's resolver: pip's "No matching distribution found for" in uv's words, markers between
    # the name and the version (astral-sh/uv issues quoting it)
    ("  ╰─▶ Because there is no version of torch==2.3.0.dev20240219+cu121 and you require "
     "torch==2.3.0.dev20240219+cu121, we can conclude that the requirements are unsatisfiable.",
     "python-packaging", "torch", "uv-no-version", ("2.3.0.dev20240219+cu121", "index")),
    ("  ╰─▶ Because there is no version of torch{platform_system != 'Darwin'}==2.5.1+cu124 and "
     "comfyui depends on torch{platform_system !=", "python-packaging", "torch", "uv-no-version",
     ("2.5.1+cu124",)),
    ("      And because there is no version of torch==2.2.1 and you require whisperx, we can "
     "conclude that the requirements are unsatisfiable.", "python-packaging", "torch",
     "uv-no-version", ("2.2.1",)),
    # GNU make's report of a recipe killed by a signal (job.c child_error), for a build output
    ("make[2]: *** [caffe2/CMakeFiles/torch_hip.dir/build.make:1234: caffe2/CMakeFiles/"
     "torch_hip.dir/__/aten/src/ATen/native/hip/Foo.hip.o] Killed", "out-of-memory", "memory",
     "make-killed", ("Foo.hip.o", "compiler")),
    ("make[2]: *** [lib/libtorch_hip.so] Killed", "out-of-memory", "memory", "make-killed",
     ("linker", "lld")),
    # CPython before 3.8: "DLL load failed: <text>" without the module (pytorch/pytorch#9263);
    # the import line above it names the module
    ("  File \"C:\\P\\lib\\site-packages\\torch\\__init__.py\", line 81, in <module>\n"
     "    from torch._C import *\nImportError: DLL load failed: The specified module could not "
     "be found.", "import", "torch._C", "dll-load-failed", ("Visual C++",)),
    # MSVC's unresolved symbol after the object file, MSBuild's "1>" prefix (pytorch/pytorch
    # #11041, #87499): the symbol read, a DLL import's __imp_ thunk named by its function
    ("Device.obj : error LNK2001: unresolved external symbol __imp_PyExc_TypeError", "link",
     "PyExc_TypeError", "linker-undefined-symbol", ("link.exe",)),
    ("1>ConsoleApplication1.obj : error LNK2001: unresolved external symbol \"private: static "
     "void __cdecl caffe2::TypeMeta::error_unsupported_typemeta(class caffe2::TypeMeta)\" "
     "(?error_unsupported_typemeta@TypeMeta@caffe2@@CAXV12@@Z)", "link",
     "caffe2::TypeMeta::error_unsupported_typemeta", "linker-undefined-symbol", ("link.exe",)),
    ("Blas.cpp.obj : error LNK2019: unresolved external symbol hipblasLtMatmul referenced in "
     "function \"void __cdecl f(void)\" (?f@@YAXXZ)", "link", "hipblasLtMatmul",
     "linker-undefined-symbol", ("hipblaslt",)),
    # MSVC's missing include (fatal error C1083), the header read from its quotes
    ("x.cpp(3): fatal error C1083: Cannot open include file: 'cuda_runtime.h': No such file or "
     "directory", "hipify", "cuda_runtime.h", "missing-header", ("cuda_runtime.h",)),
    # rocBLAS names the generic TensileLibrary.dat only after both per-target files were
    # missing (tensile_host.cpp); the errno text after it is stale (ROCm/Tensile#1936)
    ("rocBLAS error: Cannot read /opt/rocm-5.4.0/lib/rocblas/library/TensileLibrary.dat: "
     "Illegal seek", "math-library", "rocblas", "tensile-library", ("HSA_OVERRIDE_GFX_VERSION",)),
    # macOS/BSD strsignal names SIGKILL "Killed: 9" (synthetos/g2#70)
    ("arm-none-eabi-g++: internal compiler error: Killed: 9 (program cc1plus)", "out-of-memory",
     "cc1plus", "compiler-killed", ("compiler",)),
])
def test_a_family_reads_its_real_variant(text: str, klass: str, subject: str, rule: str,
                                         words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words)


@pytest.mark.parametrize("text", [
    # collect2/lto-wrapper name what they ran: make (lto-wrapper's parallel LTRANS) or a
    # non-build program killed proves no compiler ran out of memory
    "lto-wrapper: fatal error: make terminated with signal 9 [Killed]",
    "gcc-ar: fatal error: python3 terminated with signal 9 [Killed]",
    # make's SIGKILL of a recipe that builds no object or library (a test, a generator)
    "make[1]: *** [Makefile:10: test] Killed",
    # MIOpen's logger at its Info/Info2/Trace levels, and with its MPMT and time prefixes
    # (ROCm/MIOpen src/logger.cpp LoggingPrefix, LoggingLevelToCString)
    "MIOpen(HIP): Info2 [Load] libMIOpenCKGroupedConv_gfx1100.so: cannot open shared object "
    "file: No such file or directory",
    "MIOpen(HIP): Trace [Load] libfoo_gfx1100.so: cannot open shared object file: No such file "
    "or directory",
    "myhost 1234 5678 MIOpen(HIP)  12.345 (2024-01-01 10:00:00.123): Warning "
    "[OpenRuntimeLibraryForDevice] x: libMIOpenCKGroupedConv_gfx1201.so: cannot open shared "
    "object file: No such file or directory",
    # FindPackageHandleStandardArgs' status line for an optional package: the build goes on
    "-- Could NOT find hip: Found unsuitable version \"5.7.0\", but required is exact version "
    "\"6.0\"",
    # clang's exit code 1 is ordinary compile errors, not a crash
    "clang++: error: clang frontend command failed with exit code 1 (use -v to see invocation)",
    # hipBLASLt's loader at its warning level (hipBLASLt tensile_host.cpp: "rocblaslt warning:
    # No paths matched … HIPBLASLT_TENSILE_LIBPATH"): the library goes on, torch may fall back
    "rocblaslt warning: No paths matched /opt/rocm/lib/hipblaslt/library/*gfx1036*co. Make sure "
    "that HIPBLASLT_TENSILE_LIBPATH is set correctly.",
    # MIOpen's Warning about its kernel database, real in every MIOpen without the kdb package
    "MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx1030_30.kdb Performance "
    "may degrade. Please follow instructions to install: https://github.com/ROCmSoftwarePlatform/"
    "MIOpen#installing-miopen-kernels-package",
    # hipBLASLt's loader naming a per-target file it could not read: proves nothing alone
    "rocblaslt error: Cannot read \"C:\\r\\hipblaslt\\library\\TensileLibrary_lazy_gfx1101.dat\": "
    "No error",
    # the old form with no import line in sight: the module is unknown
    "ImportError: DLL load failed: The specified module could not be found.",
    # a WinError code no rule reads (access denied): not a missing dependency
    "OSError: [WinError 5] Access is denied. Error loading \"C:\\v\\torch\\lib\\c10.dll\" or one "
    "of its dependencies.",
])
def test_a_variant_look_alike_claims_nothing(text: str) -> None:
    assert explain_text(text).klass is None


def test_miopen_at_its_error_level_still_reports_the_missing_library() -> None:
    found = explain_text("MIOpen(HIP): Error [Load] libMIOpenX.so: cannot open shared object "
                         "file: No such file or directory")
    assert (found.klass, found.rule) == ("import", "cannot-open-so")


def test_a_submodule_missing_inside_an_installed_package_claims_nothing() -> None:
    """r7 (lamikr/rocm_sdk_builder#251): Tensile's own script fails to import a part of Tensile,
    so Tensile is installed but partial; "install Tensile" would be a wrong fix."""
    log = ("  File \"/b/virtualenv/lib/python3.10/site-packages/Tensile/bin/TensileCreateLibrary\","
           " line 37, in <module>\n"
           "    from Tensile.TensileCreateLibrary import TensileCreateLibrary\n"
           "ModuleNotFoundError: No module named 'Tensile.TensileCreateLibrary'\n")
    assert explain_text(log, step="configure").klass is None
    # The same module missing from a build script outside the package is still named.
    found = explain_text("  File \"/src/setup.py\", line 3, in <module>\n"
                         "ModuleNotFoundError: No module named 'Tensile.TensileCreateLibrary'\n",
                         step="configure")
    assert (found.klass, found.subject) == ("python-packaging", "Tensile")
