"""ROCm-install and Python-side families of r13's misses, read by shape (issue 40, devpk5):
each text is what the program prints (pip's resolver and cache command, glibc's ld.so, clang's
driver, TheRock's exe stub and rocm_sdk, CPython's traceback, Tensile's failed compile), with
the value the reading must take out of it, and the look-alikes that must claim nothing or
keep their older reading."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_CONFLICT = ("ERROR: Cannot install {info} because these package versions have conflicting "
             "dependencies.")

_STUB = "could not exec {path}: {error}"

_SDK_INIT = (
    "Traceback (most recent call last):\n"
    "  File \"C:\\venv\\Lib\\site-packages\\rocm_sdk\\_devel.py\", line 205, in {func}\n"
    "    symlink_target = dest_path.readlink()\n"
    "                     ^^^^^^^^^^^^^^^^^^^^\n"
    "  File \"C:\\Python312\\Lib\\pathlib.py\", line 1282, in readlink\n"
    "    return self.with_segments(os.readlink(self))\n"
    "FileNotFoundError: [WinError 2] The system cannot find the file specified: "
    "'C:\\venv\\Lib\\site-packages\\_rocm_sdk_devel\\bin\\hipcc'")

_SCRIPT = ("Traceback (most recent call last):\n"
           "  File \"/opt/build/bin/{script}\", line 31, in <module>\n"
           "    {statement}\n"
           "ModuleNotFoundError: No module named '{module}'")

_NO_VERSION = ("  File \"D:\\src\\hipBLASLt\\tensilelite\\Tensile\\Toolchain\\Validators.py\", "
               "line 61, in {func}\n"
               "    latest = max(versions, key=lambda d: tuple(map(int, d.name.split(\".\"))))\n"
               "\n"
               "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
               "{prefix}ValueError: {message}")

_TENSILE = ("RuntimeError: Error compiling source object file: b\"fatal error: cannot open file "
            "'/spack/llvm-amdgpu-7.1.0-abc/amdgcn/bitcode/ocml.bc': Invalid record (Producer: "
            "'LLVM{producer}.0.0git' Reader: 'LLVM {reader}.0.0git')\\n1 error generated.\\n\"\n"
            "Failed command: {command} -x hip --offload-arch=gfx942 k.cpp -c -o k.o")


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    # pip's resolver: the project name, whatever specifier the requirement carries
    (_CONFLICT.format(info="cmake<4 and cmake==4.0.3"), "python-packaging", "cmake",
     "pip-resolver-conflict", ("cmake<4 and cmake==4.0.3", "two requirements on cmake")),
    (_CONFLICT.format(info="torch==2.4.0+rocm6.1, torchvision==0.20.0 and xformers>=0.0.28"),
     "python-packaging", "torch", "pip-resolver-conflict", ("torchvision and torchaudio",)),
    (_CONFLICT.format(info="vllm[rocm]==0.6.3"), "python-packaging", "vllm",
     "pip-resolver-conflict", ("vllm",)),
    (_CONFLICT.format(info="-r requirements.txt (line 3) and torchvision==0.20.0"),
     "python-packaging", "torchvision", "pip-resolver-conflict", ("torchvision's",)),
    # pip cache commands with the cache off
    ("ERROR: pip cache commands can not function since cache is disabled.", "python-packaging",
     "pip", "pip-cache-disabled", ("PIP_CACHE_DIR", "--no-cache-dir")),
    # ld.so starting a program, on one line or wrapped after the colon
    ("./test_opus_basic: error while loading shared libraries: libamdhip64.so.7: cannot open "
     "shared object file: No such file or directory", "import", "libamdhip64.so.7",
     "cannot-open-so", ("RUNPATH", "-Wl,-rpath", "readelf -d")),
    ("    ./rocblas-bench: error while loading shared libraries:\n    librocblas.so.5: cannot "
     "open shared object file", "import", "librocblas.so.5", "cannot-open-so", ("rpath",)),
    # clang's driver that cannot spawn its offload packager, with or without the -v hint
    ("clang++: error: unable to execute command: posix_spawn failed: No such file or directory\n"
     "clang++: error: llvm-offload-binary command failed with exit code 1", "rocm-install",
     "llvm-offload-binary", "driver-tool-missing", ("llvm-offload-binary --version",)),
    ("clang-22: error: unable to execute command: posix_spawn failed: No such file or "
     "directory\nclang-22: error: llvm-offload-binary command failed with exit code 1 (use -v "
     "to see invocation)", "rocm-install", "llvm-offload-binary", "driver-tool-missing", ()),
    # TheRock's exe stub whose target its package lacks
    (_STUB.format(path="/venv/lib/python3.12/site-packages/_rocm_sdk_devel/bin/amdllvm",
                  error="No such file or directory"), "rocm-install", "amdllvm",
     "rocm-sdk-stub-target-missing", ("_rocm_sdk_devel", "rocm-sdk path --root")),
    (_STUB.format(path="/venv/lib/python3.12/site-packages/_rocm_sdk_core/bin/rocminfo",
                  error="No such file or directory"), "rocm-install", "rocminfo",
     "rocm-sdk-stub-target-missing", ("_rocm_sdk_core",)),
    # rocm-sdk init on Windows reading back a symlink it could not make
    (_SDK_INIT.format(func="_lock_and_expand"), "rocm-install", "_rocm_sdk_devel",
     "rocm-sdk-devel-symlink-windows", ("WinError 2", "Developer Mode", "rocm-sdk init")),
    # a script's own top-level import, at any step; the pip name where it differs
    (_SCRIPT.format(script="rocblas_gentest.py", statement="from yaml import CLoader as Loader",
                    module="yaml"), "python-packaging", "yaml", "no-module",
     ("rocblas_gentest.py", "pyyaml")),
    (_SCRIPT.format(script="gen.py", statement="import msgpack", module="msgpack"),
     "python-packaging", "msgpack", "no-module", ("gen.py", "pip install msgpack")),
    # a compiler older than the device bitcode, named by Tensile's failed command
    (_TENSILE.format(producer=20, reader=18, command="/opt/rocm/bin/amdclang++"),
     "rocm-install", "/opt/rocm", "older-compiler-newer-device-bitcode",
     ("LLVM 18", "LLVM 20", "/spack/llvm-amdgpu-7.1.0-abc/bin/amdclang++", "/opt/rocm/bin")),
    (_TENSILE.format(producer=19, reader=17, command="ccache /opt/rocm-6.0.0/llvm/bin/clang++"),
     "rocm-install", "/opt/rocm-6.0.0/llvm", "older-compiler-newer-device-bitcode",
     ("/opt/rocm-6.0.0/llvm/bin/clang++",)),
    # Tensile's Windows toolchain search over an empty HIP SDK folder, both CPython wordings
    (_NO_VERSION.format(func="_windowsLatestRocmBin", prefix="1.7\t",
                        message="max() iterable argument is empty"), "rocm-install",
     "C:\\Program Files\\AMD\\ROCm", "tensile-hip-sdk-folder-without-version",
     ("hipBLASLt", "X.Y", "HIP_PATH")),
    (_NO_VERSION.format(func="_windowsLatestRocmBin", prefix="",
                        message="max() arg is an empty sequence"), "rocm-install",
     "C:\\Program Files\\AMD\\ROCm", "tensile-hip-sdk-folder-without-version", ()),
    # an old sdist's setup_requires fetching setuptools_scm 8 (flattened or as CPython prints)
    ("File /tmp/easy_install-_pf/matplotlib-3.5.1/.eggs/setuptools_scm-8.3.1-py3.12.egg/"
     "setuptools_scm/_integration/pyproject_reading.py, line 36, in read_pyproject section = "
     "defn.get(tool, {})[tool_name] KeyError: 'setuptools_scm'", "python-packaging",
     "matplotlib", "setuptools-scm-section-missing", ("matplotlib==3.5.1", "setuptools_scm<8",
                                                      "8.3.1")),
    ("LookupError: /tmp/pip-install-x/scikit-image-0.19.3/pyproject.toml does not contain a "
     "tool.setuptools_scm section", "python-packaging", "scikit-image",
     "setuptools-scm-section-missing", ("scikit-image 0.19.3",)),
])
def test_family_reads_its_value(text: str, klass: str, subject: str, rule: str,
                                words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words)


@pytest.mark.parametrize("text", [
    # pip names no trigger, or only where requirements came from
    _CONFLICT.format(info="the requested packages"),
    _CONFLICT.format(info="-r requirements.txt (line 3)"),
    # another program's "could not exec", and a stub target that exists but will not run
    _STUB.format(path="/usr/lib/git-core/git-remote-https", error="No such file or directory"),
    _STUB.format(path="/venv/lib/python3.12/site-packages/_rocm_sdk_devel/bin/amdllvm",
                 error="Permission denied"),
    # a WinError outside rocm_sdk's expansion
    _SDK_INIT.format(func="copy_tree"),
    # a bitcode reader that is newer than the writer is not this failure
    _TENSILE.format(producer=17, reader=19, command="/opt/rocm/bin/amdclang++"),
    # a tool that ran and failed (no spawn error before it)
    "clang++: error: llvm-offload-binary command failed with exit code 1",
    "clang++: error: llvm-offload-binary command failed with exit code 12",
    # an empty max() elsewhere in a program
    _NO_VERSION.format(func="pick_latest", prefix="", message="max() arg is an empty sequence"),
    # setuptools_scm's error with no source folder to name the project
    "KeyError: 'setuptools_scm'",
])
def test_look_alike_claims_nothing(text: str) -> None:
    assert explain_text(text).klass is None


def test_a_dlopen_keeps_the_loader_path_reading() -> None:
    # Python's ctypes (not ld.so starting a program): no RUNPATH advice.
    found = explain_text("OSError: libamdhip64.so.7: cannot open shared object file: No such "
                         "file or directory")
    assert (found.klass, found.subject, found.rule) == ("import", "libamdhip64.so.7",
                                                        "cannot-open-so")
    assert "rpath" not in found.fix
    assert "ldconfig" in found.fix


def test_a_deep_traceback_import_is_not_the_scripts_own() -> None:
    # The import fails two frames down (a library's import): the one-frame shape does not hold,
    # and at the verify step the build-side reading does not apply either.
    text = ("Traceback (most recent call last):\n"
            "  File \"/opt/app/run.py\", line 3, in <module>\n"
            "    import tool\n"
            "  File \"/opt/app/tool.py\", line 5, in <module>\n"
            "    import yaml\n"
            "ModuleNotFoundError: No module named 'yaml'")
    assert explain_text(text, step="verify").klass is None
