"""Windows toolchain families of issue 40 (d9, devwin), read from the tools' own wordings:
MSVC's and lld-link's linker errors (LNK1104 / "could not open" by what the file is, LNK2038,
LNK1112 / the machine type conflict), the MSVC STL's compiler version check, cl's C1128 and
C1041, setuptools without Visual C++, the shells not finding MSVC's tools, ninja's
CreateProcess and pip's Windows long path hints. Each line is what the program prints, with
the values the reading must take out of it, and the look-alikes that must claim nothing."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_NINJA_HIPCC = """[12/900] Building HIP object foo.obj
FAILED: caffe2/CMakeFiles/torch_hip.dir/foo.obj
"C:/Program Files/AMD/ROCm/6.2/bin/hipcc.exe" -c foo.hip -o foo.obj
CreateProcess failed: The system cannot find the file specified.
ninja: build stopped: subcommand failed.
"""

_NINJA_CL = """FAILED: CMakeFiles/x.dir/x.cpp.obj
C:\\VS\\VC\\Tools\\MSVC\\14.38.33130\\bin\\Hostx64\\x64\\cl.exe /nologo /TP -c x.cpp
CreateProcess failed: The system cannot find the file specified.
"""


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    ("LINK : fatal error LNK1104: cannot open file 'python312.lib'\n", "link", "python312",
     "coff-cannot-open-file", ("python312.lib", "libs folder", "LNK1104")),
    ("lld-link: error: could not open 'libcmt.lib': No such file or directory\n", "link",
     "libcmt", "coff-cannot-open-file", ("MSVC toolset", "vcvarsall.bat x64", "lld-link")),
    ("LINK : fatal error LNK1104: cannot open file 'kernel32.lib'\n", "link", "kernel32",
     "coff-cannot-open-file", ("Windows SDK",)),
    # an output the linker writes: in use, not missing
    ("LINK : fatal error LNK1104: cannot open file 'build\\lib.win-amd64-cpython-311\\"
     "flash_attn_2_cuda.cp311-win_amd64.pyd'\n", "link",
     "flash_attn_2_cuda.cp311-win_amd64.pyd", "coff-cannot-open-file",
     ("in use", "close what uses")),
    # a Unix library MSVC's C runtime replaces: not a library to install
    ("LINK : fatal error LNK1104: cannot open file 'pthread.lib'\n", "link", "pthread",
     "coff-cannot-open-file", ("libpthread", "-lpthread", "if(NOT WIN32)")),
    ("LINK : fatal error LNK1104: cannot open file 'c10_hip.lib'\n", "link", "c10_hip",
     "coff-cannot-open-file", ("library path", "LIBPATH")),
    ("2>gtest.lib(gtest-all.obj) : error LNK2038: mismatch detected for 'RuntimeLibrary': "
     "value 'MTd_StaticDebug' doesn't match value 'MDd_DynamicDebug' in main.obj\n", "link",
     "gtest.lib", "msvc-lnk2038-mismatch",
     ("RuntimeLibrary", "MTd_StaticDebug", "MDd_DynamicDebug", "CMAKE_MSVC_RUNTIME_LIBRARY")),
    ("ops.obj : error LNK2038: mismatch detected for '_ITERATOR_DEBUG_LEVEL': value '0' "
     "doesn't match value '2' in main.obj\n", "link", "ops.obj", "msvc-lnk2038-mismatch",
     ("_ITERATOR_DEBUG_LEVEL", "ops.obj: 0", "main.obj: 2")),
    ("zlib.lib(adler32.obj) : fatal error LNK1112: module machine type 'x86' conflicts with "
     "target machine type 'x64'\n", "link", "zlib.lib", "coff-machine-type-conflict",
     ("x86", "binary for x64", "rebuild zlib.lib for x64")),
    ("lld-link: error: helper.obj: machine type arm64 conflicts with x64\n", "link",
     "helper.obj", "coff-machine-type-conflict", ("arm64",)),
    ("LINK : fatal error LNK1189: library limit of 65535 objects exceeded\n", "link", "exports",
     "coff-export-limit", ("65,535", "WINDOWS_EXPORT_ALL_SYMBOLS")),
    ("LINK : fatal error LNK1248: image size (80A2C000) exceeds maximum allowable size "
     "(80000000)\n", "link", "image-size", "coff-image-too-large",
     ("80A2C000", "80000000", "--arch")),
    ("C:\\src\\x.cpp(12): fatal error C1001: INTERNAL COMPILER ERROR(compiler file "
     "'d:\\agent\\src\\vctools\\compiler\\utc\\src\\p2\\main.c', line 224)\n",
     "compiler-crash", "msvc", "msvc-internal-compiler-error",
     ("in its optimizer", "x.cpp", "/Od")),
    ("1>C:\\src\\y.cpp(3,1): fatal error C1001: Internal compiler error.\n",
     "compiler-crash", "msvc", "msvc-internal-compiler-error", ("C1001) while compiling y.cpp",)),
    ("LINK : fatal error LNK1158: cannot run 'rc.exe'\n", "host-compiler", "msvc",
     "msvc-link-cannot-run", ("rc.exe, a tool of the Windows SDK", "vcvarsall.bat x64")),
    ("clang++.exe: warning: unable to find a Visual Studio installation; try running Clang from "
     "a developer command prompt [-Wmsvc-not-found]\nclang++.exe: error: unable to execute "
     "command: program not executable\n", "host-compiler", "msvc", "clang-no-visual-studio",
     ("link.exe", "-fuse-ld=lld")),
    ("C:\\b\\amdhip64.dll : fatal error LNK1107: invalid or corrupt file: cannot read at "
     "0x2D0\n", "link", "amdhip64", "coff-bad-input", ("LNK1107", "amdhip64.lib")),
    ("c10.lib : fatal error LNK1107: invalid or corrupt file: cannot read at 0x1A\n", "link",
     "c10.lib", "coff-bad-input", ("could not read c10.lib", "delete c10.lib")),
    # an archive member lld-link does not know
    ("lld-link: error: unknown file type: kernels.o\n", "link", "kernels.o", "coff-bad-input",
     ("COFF", "rebuild kernels.o")),
    ("C:\\src\\csrc\\shm.cpp(3): fatal error C1083: Cannot open include file: 'sys/mman.h': "
     "No such file or directory\n", "host-compiler", "msvc", "windows-posix-header",
     ("sys/mman.h, a POSIX header", "#ifndef _WIN32")),
    ("C:\\src\\x.cpp(12): error C3861: '__builtin_popcount': identifier not found\n",
     "host-compiler", "msvc", "msvc-gcc-builtin", ("__builtin_popcount", "clang-cl", "__popcnt")),
    ("C:\\src\\x.cpp(5): error C2065: 'M_PI': undeclared identifier\n", "host-compiler",
     "msvc", "msvc-math-defines", ("M_PI", "_USE_MATH_DEFINES")),
    ("C:\\src\\x.cu(5,20): error: use of undeclared identifier 'M_SQRT1_2'\n",
     "host-compiler", "msvc", "msvc-math-defines", ("M_SQRT1_2",)),
    ("ERROR: Could not install packages due to an OSError: [WinError 5] Access is denied: "
     "'C:\\\\venv\\\\Lib\\\\site-packages\\\\torch\\\\lib\\\\c10.dll'\nCheck the "
     "permissions.\n", "python-packaging", "torch", "pip-windows-file-held",
     ("c10.dll", "WinError 5", "close every Python process")),
    ("ERROR: Could not install packages due to an OSError: [WinError 32] The process cannot "
     "access the file because it is being used by another process: 'C:\\\\py\\\\Lib\\\\"
     "site-packages\\\\numpy-1.26.4.dist-info\\\\RECORD'\n", "python-packaging", "numpy",
     "pip-windows-file-held", ("another process has it open",)),
    ("C:\\VS\\include\\yvals_core.h(902): error C2338: static_assert failed: 'error STL1001: "
     "Unexpected compiler version, expected MSVC 19.40 or newer.'\n", "host-compiler", "msvc",
     "msvc-stl-compiler-too-old", ("STL1001", "MSVC 19.40 or newer", "this cl")),
    ("yvals_core.h(919,1): error: static assertion failed: error STL1000: Unexpected compiler "
     "version, expected Clang 17.0.0 or newer.\n", "host-compiler", "clang",
     "msvc-stl-compiler-too-old", ("Clang 17.0.0 or newer", "vcvars_ver")),
    ("C:\\VS\\include\\xkeycheck.h(250): fatal error C1189: #error:  The C++ Standard Library "
     "forbids macroizing the keyword \"inline\". Enable warning C4005 to find the forbidden "
     "define.\n", "host-compiler", "msvc", "msvc-keyword-macro",
     ("#define inline", "C4005")),
    ("C:\\src\\csrc\\init.cpp(3): fatal error C1083: Cannot open include file: 'corecrt.h': "
     "No such file or directory\n", "host-compiler", "msvc", "msvc-toolset-header-missing",
     ("cl did not find corecrt.h", "Windows SDK")),
    ("C:\\src\\ops.cpp(1,10): fatal error: 'corecrt.h' file not found\n", "host-compiler",
     "msvc", "msvc-toolset-header-missing", ("clang (MSVC target)", "INCLUDE")),
    # a UCRT C header in clang's form stays host_compiler.py's reading
    ("C:\\src\\ops.cpp(1,10): fatal error: 'stdio.h' file not found\n", "host-compiler",
     "msvc", "windows-crt-header-missing", ("stdio.h", "Windows SDK")),
    ("C:\\src\\aten\\src\\ATen\\native\\BinaryOps.cpp : fatal error C1128: number of sections "
     "exceeded object file format limit: compile with /bigobj\n", "host-compiler", "msvc",
     "msvc-bigobj", ("BinaryOps.cpp", "/bigobj")),
    ("C:\\src\\x.cpp: fatal error C1041: cannot open program database 'C:\\src\\build\\"
     "vc140.pdb'; if multiple CL.EXE write to the same .PDB file, please use /FS\n",
     "host-compiler", "msvc", "msvc-pdb-fs", ("vc140.pdb", "/FS", "/Z7")),
    ("      error: Microsoft Visual C++ 14.0 or greater is required. Get it with \"Microsoft "
     "C++ Build Tools\": https://visualstudio.microsoft.com/visual-cpp-build-tools/\n",
     "host-compiler", "msvc", "setuptools-no-visual-cpp", ("vcvarsall.bat", "Build Tools")),
    ("'cl' is not recognized as an internal or external command,\n", "host-compiler", "msvc",
     "msvc-tool-not-found", ("could not find cl", "vcvarsall.bat x64")),
    ("nmake : The term 'nmake' is not recognized as the name of a cmdlet, function, script "
     "file, or operable program.\n", "host-compiler", "msvc", "msvc-tool-not-found",
     ("could not find nmake",)),
    (_NINJA_HIPCC, "rocm-install", "hipcc", "ninja-createprocess-not-found",
     ("C:/Program Files/AMD/ROCm/6.2/bin/hipcc.exe", "HIP_PATH")),
    (_NINJA_CL, "host-compiler", "msvc", "ninja-createprocess-not-found",
     ("Hostx64\\x64\\cl.exe", "vcvarsall.bat")),
    ("HINT: This error might have occurred since this system does not have Windows Long Path "
     "support enabled. You can find information on how to enable this at "
     "https://pip.pypa.io/warnings/enable-long-paths\n", "python-packaging", "long-paths",
     "pip-windows-long-path", ("260-character", "LongPathsEnabled")),
    ("HINT: This error might be caused by a file or folder name exceeding 255 characters, "
     "which is a Windows limitation even if long paths are enabled.\n", "python-packaging",
     "long-paths", "pip-windows-long-path", ("255 characters", "shorter")),
])
def test_a_windows_tool_message_is_read(text: str, klass: str, subject: str, rule: str,
                                        words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words, step="build")


def test_pip_permission_denied_on_linux_is_not_the_windows_file_held_reading() -> None:
    found = explain_text("ERROR: Could not install packages due to an OSError: [Errno 13] "
                         "Permission denied: '/usr/lib/python3/dist-packages/x'\n", step="build")
    assert found.rule == "pip-install-permission-denied"


@pytest.mark.parametrize("text", [
    # cl's own warning for a GCC flag, and clang-cl's: the compile goes on
    "cl : Command line warning D9002 : ignoring unknown option '-fPIC'\n",
    "clang-cl: warning: unknown argument ignored in clang-cl: '-fPIC' [-Wunknown-argument]\n",
    # CUDA's nvcc against a newer STL: not a ROCm build's compiler
    "yvals_core.h(908): error C2338: static_assert failed: 'error STL1002: Unexpected compiler "
    "version, expected CUDA 12.4 or newer.'\n",
    # a project's own header, in cl's and clang's MSVC-style words; GCC's form of a std header
    "C:\\src\\x.cpp(2): fatal error C1083: Cannot open include file: 'mylib.h': No such file "
    "or directory\n",
    "C:\\src\\x.cpp(2,10): fatal error: 'mylib.h' file not found\n",
    # clang's warning alone: the compile and link went on (lld-link found the libraries)
    "clang: warning: unable to find a Visual Studio installation; try running Clang from a "
    "developer command prompt [-Wmsvc-not-found]\n",
    # clang unable to run a program with no such warning: not read as Visual Studio's absence
    "clang: error: unable to execute command: program not executable\n",
    # LINK could not run a program it does not run itself
    "LINK : fatal error LNK1158: cannot run 'pgosweep.exe'\n",
    # clang's M_PI error in GCC-style locations (not a Windows target), another identifier
    "x.c:5:20: error: use of undeclared identifier 'M_PI'\n",
    "C:\\src\\x.cpp(12): error C3861: 'foo': identifier not found\n",
    # pip's OSError for a file that is not there, and on Linux
    "ERROR: Could not install packages due to an OSError: [WinError 2] The system cannot find "
    "the file specified: 'C:\\\\x\\\\y.exe'\n",
    # lld-link could not open a library for another reason than its absence
    "lld-link: error: could not open 'foo.lib': Permission denied\n",
    # an object input, and an lld-link input named like an output: no claim
    "LINK : fatal error LNK1104: cannot open file 'C:\\b\\x.obj'\n",
    "lld-link: error: could not open 'helper.dll': No such file or directory\n",
    # the message's words echoed in a command line, and the shell's error for another program
    "echo 'cl' is not recognized as an internal or external command\n",
    "'python3' is not recognized as an internal or external command,\n",
    # ninja's line without its FAILED/command lines before it, or for a program it does not tie
    # to ROCm or MSVC
    "CreateProcess failed: The system cannot find the file specified.\n",
    "FAILED: out.txt\npython.exe gen.py\nCreateProcess failed: The system cannot find the file "
    "specified.\n",
])
def test_a_look_alike_claims_nothing(text: str) -> None:
    found = explain_text(text, step="build")
    assert found.klass is None, (found.rule, found.cause)
