"""Value reading of the pip, setuptools, CPython and cpp_extension shapes added for d9
(devpy), from lines the real tools printed here (tests/failures/make/devpy.sh; the one-line
uninstall and hash forms are pip 23.2's, from the venv that CPython 3.11's ensurepip makes).
Each test asserts the values read; the look-alikes (a retry warning pip recovers from, other
releases offered besides the ones Requires-Python skipped, a circular import, a hash report
without its heading, a CUDA_HOME error beside a ROCm torch) claim nothing or leave the answer
to the rule that owns it."""

from __future__ import annotations

from rocmforge.triage import explain_text

_RETRY = ("WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, "
          "status=None)) after connection broken by 'NewConnectionError(\"HTTPConnection("
          "host='pypi.internal.example', port=8080): Failed to establish a new connection: "
          "[Errno 111] Connection refused\")': /simple/torch/\n")
_NO_MATCH = ("ERROR: Could not find a version that satisfies the requirement torch==2.9.1 "
             "(from versions: none)\nERROR: No matching distribution found for torch==2.9.1\n")


def test_an_index_that_refused_the_connection_is_named_with_host_and_errno() -> None:
    d = explain_text("Looking in indexes: http://pypi.internal.example:8080/simple\n"
                     + _RETRY + _NO_MATCH)
    assert (d.klass, d.subject, d.rule) == ("python-packaging", "torch",
                                            "pip-index-unreachable")
    assert d.cause.startswith("pip could not reach its package index at "
                              "pypi.internal.example (Connection refused), so it saw no "
                              "release of torch at all")
    assert "HTTPS_PROXY" in d.fix


def test_a_name_resolution_failure_reads_its_own_errno_text() -> None:
    line = ("WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, "
            "status=None)) after connection broken by 'NameResolutionError(\"<urllib3."
            "connection.HTTPSConnection object at 0x7f>: Failed to resolve 'download.pytorch"
            ".org' ([Errno -3] Temporary failure in name resolution)\")': /whl/rocm6.4/torch/\n")
    d = explain_text(line + _NO_MATCH)
    assert d.rule == "pip-index-unreachable"
    assert "(Temporary failure in name resolution)" in d.cause


def test_without_the_retry_warning_the_plain_no_release_answer_stays() -> None:
    d = explain_text(_NO_MATCH)
    assert d.rule == "no-distribution"


def test_a_retry_warning_pip_recovered_from_claims_nothing() -> None:
    d = explain_text(_RETRY + "Processing ./wh/blinker-1.9.0-py3-none-any.whl\n"
                     "Installing collected packages: blinker\n"
                     "Successfully installed blinker-1.9.0\n")
    assert d.klass is None and d.rule == ""


_IGNORED = ("ERROR: Ignored the following versions that require a different python version: "
            "2.8.0 Requires-Python >=3.10; 2.9.0 Requires-Python >=3.10\n")


def test_requires_python_reads_the_version_and_range_skipped() -> None:
    d = explain_text(_IGNORED + _NO_MATCH.replace("torch==2.9.1", "torch"))
    assert (d.subject, d.rule) == ("torch", "pip-requires-python-excluded")
    assert "(2.9.0 requires Python >=3.10; 2 release(s) skipped)" in d.cause
    assert "torch 2.9.0 supports (>=3.10" in d.fix


def test_requires_python_with_other_releases_offered_is_not_claimed_by_it() -> None:
    offered = _NO_MATCH.replace("(from versions: none)", "(from versions: 2.5.0, 2.6.0)")
    d = explain_text(_IGNORED + offered)
    assert d.rule != "pip-requires-python-excluded"


_HASHES = ("ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you "
           "have updated the package versions, please update the hashes. Otherwise, examine "
           "the package contents carefully; someone may have tampered with them.\n"
           "    triton==3.3.0 from https://download.pytorch.org/whl/triton-3.3.0-cp312-cp312-"
           "manylinux_2_28_x86_64.whl (from -r requirements.txt (line 4)):\n"
           "        Expected sha256 1c2d\n"
           "             Got        9f8e\n")


def test_a_hash_mismatch_names_the_package_version_and_file() -> None:
    d = explain_text(_HASHES)
    assert (d.subject, d.rule) == ("triton", "pip-hash-mismatch")
    assert d.cause.startswith("the file pip got for triton 3.3.0 (triton-3.3.0-cp312-cp312-"
                              "manylinux_2_28_x86_64.whl) does not have the sha256")
    assert "`python -m pip download --no-deps --no-cache-dir triton==3.3.0`" in d.fix


def test_expected_sha256_without_pips_heading_claims_nothing() -> None:
    d = explain_text("    foo==1.0 from https://x/foo-1.0.tar.gz:\n        Expected sha256 "
                     "1c2d\n             Got        9f8e\n")
    assert d.rule != "pip-hash-mismatch"


def test_an_invalid_requirement_reads_the_name_and_the_single_equals() -> None:
    d = explain_text("ERROR: Invalid requirement: 'torch=2.1': Expected semicolon (after name "
                     "with no version specifier) or end\n")
    assert (d.subject, d.rule) == ("torch", "pip-invalid-requirement")
    assert "'torch=2.1' (a single `=`: pip's operator is `==`)" in d.cause
    d = explain_text("ERROR: Invalid requirement: 'torchvision>0.20,': Expected end\n")
    assert d.subject == "torchvision" and "single" not in d.cause


def test_both_uninstall_shapes_of_pip_are_read() -> None:
    old = explain_text("ERROR: Cannot uninstall blinker 1.4, RECORD file not found. You might "
                       "be able to recover from this via: 'pip install --force-reinstall "
                       "--no-deps blinker==1.4'.\n")
    assert (old.subject, old.rule) == ("blinker", "pip-uninstall-unrecorded")
    assert "the installed blinker 1.4 but cannot uninstall it" in old.cause
    distutils = explain_text("ERROR: Cannot uninstall 'PyYAML'. It is a distutils installed "
                             "project and thus we cannot accurately determine which files "
                             "belong to it which would lead to only a partial uninstall.\n")
    assert distutils.subject == "pyyaml" and "installed by distutils" in distutils.cause
    new = explain_text("error: uninstall-no-record-file\n\n× Cannot uninstall numpy 1.26.4\n"
                       "╰─> The package's contents are unknown: no RECORD file was found for "
                       "numpy.\n")
    assert (new.subject, new.rule) == ("numpy", "pip-uninstall-unrecorded")
    assert "--ignore-installed numpy" in new.fix


def test_cannot_import_name_reads_module_and_name_but_not_a_circular_import() -> None:
    d = explain_text("ImportError: cannot import name 'is_hip_available' from "
                     "'torch.utils.cpp_extension' (/venv/lib/python3.12/site-packages/torch/"
                     "utils/cpp_extension.py)\n")
    assert (d.subject, d.rule) == ("torch", "import-name-missing")
    assert "the installed torch.utils.cpp_extension (from /venv/" in d.cause
    assert "has no 'is_hip_available'" in d.cause
    loop = explain_text("ImportError: cannot import name 'setup_ops' from partially "
                        "initialized module 'loop.a' (most likely due to a circular import) "
                        "(/src/loop/a.py)\n")
    assert loop.klass is None
    namespace = explain_text("ImportError: cannot import name 'ops' from 'vllm' "
                             "(unknown location)\n")
    # not a version pin: a namespace stub, which its own rule reads (devbt9, r17's therock3513)
    assert (namespace.klass, namespace.rule) == ("python-packaging",
                                                 "import-from-namespace-stub")


def test_cuda_home_alone_is_the_cpp_extension_rule_and_with_a_rocm_torch_the_entry() -> None:
    line = ("OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA "
            "install root.\n")
    d = explain_text(line)
    assert (d.klass, d.subject, d.rule) == ("rocm-disabled", "USE_ROCM",
                                            "cpp-extension-cuda-home-unset")
    assert "torch.version.hip" in d.fix
    rocm = explain_text("torch 2.7.0+rocm6.3 is installed\n" + line)
    assert rocm.rule == "cuda-path-with-rocm-torch"


def test_fixed_text_entries_read_their_values() -> None:
    d = explain_text("ERROR: Directory 'third_party/flash-attention' is not installable. "
                     "Neither 'setup.py' nor 'pyproject.toml' found.\n")
    assert d.rule == "pip-directory-not-installable"
    assert "the folder third_party/flash-attention" in d.cause
    d = explain_text("ERROR: Could not open requirements file: [Errno 2] No such file or "
                     "directory: 'requirements/rocm.txt'\n")
    assert d.rule == "pip-requirements-file-missing"
    assert "/path/to/requirements/rocm.txt" in d.fix
    d = explain_text("error: Multiple top-level packages discovered in a flat-layout: "
                     "['csrc', 'aiter'].\n")
    assert d.rule == "setuptools-flat-layout" and "(['csrc', 'aiter'])" in d.cause
    d = explain_text("/tmp/x/ext.cpp:2:10: fatal error: 'Python.h' file not found\n")
    # one rule for a missing Python.h: system_headers' (class missing-component)
    assert (d.klass, d.subject, d.rule) == ("missing-component", "python3-dev",
                                            "system-header-missing")


def test_echoed_words_and_warnings_claim_nothing() -> None:
    for text in ("+ echo 'Ninja is required' >> notes.txt\n",
                 "UserWarning: Attempted to use ninja as the BuildExtension backend but we "
                 "could not find ninja.. Falling back to using the slow distutils backend.\n",
                 "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n",
                 "$ pip install --user -r requirements.txt\n"):
        assert explain_text(text).klass is None, text


def test_the_messages_inside_an_echoed_or_grepped_command_claim_nothing() -> None:
    for text in ('+ grep -q "Ninja is required to load C++ extensions" build.log\n',
                 "+ echo \"ERROR: Can not perform a '--user' install. User site-packages are "
                 "not visible in this virtualenv.\"\n",
                 'grep "fatal error: Python.h: No such file or directory" build.log\n',
                 "+ echo 'OSError: CUDA_HOME environment variable is not set. Please set it to "
                 "your CUDA install root.'\n",
                 "+ test -f setup.py || echo \"Directory '.' is not installable. Neither "
                 "'setup.py' nor 'pyproject.toml' found.\"\n",
                 "grep 'Cannot uninstall blinker 1.4, RECORD file not found' log\n"):
        assert explain_text(text).klass is None, text


def test_a_wheel_renamed_by_a_second_download_is_read_with_its_proper_name() -> None:
    d = explain_text("ERROR: torch-2.9.1+rocm6.4-cp312-cp312-manylinux_2_28_x86_64 (2).whl is "
                     "not a supported wheel on this platform.\n")
    assert (d.subject, d.rule) == ("torch", "pip-wheel-renamed-copy")
    assert 'carries "(2)"' in d.cause
    assert "torch-2.9.1+rocm6.4-cp312-cp312-manylinux_2_28_x86_64.whl" in d.fix
    plain = explain_text("ERROR: torch-2.9.1-cp314-cp314-manylinux_2_28_x86_64.whl is not a "
                         "supported wheel on this platform.\n")
    assert plain.rule == "pip-unsupported-wheel"


def test_python_without_pip_reads_the_interpreter_and_a_missing_pip_import_is_other() -> None:
    d = explain_text("/home/u/.venv/bin/python3: No module named pip\n")
    assert (d.subject, d.rule) == ("pip", "python-no-pip-module")
    assert "`/home/u/.venv/bin/python3 -m ensurepip --upgrade`" in d.fix
    assert explain_text("+ echo 'python: No module named pip' >> log\n").rule == ""
    assert explain_text("/usr/bin/python3: No module named pipx\n").rule != \
        "python-no-pip-module"


def test_setuptools_missing_sources_are_read_and_a_missing_build_product_is_not() -> None:
    d = explain_text("error: package directory 'third_party/aiter/aiter' does not exist\n")
    assert (d.subject, d.rule) == ("setuptools", "setuptools-package-dir-missing")
    assert "folder third_party/aiter/aiter" in d.cause
    d = explain_text("error: can't copy 'csrc/include/hip_compat.h': doesn't exist or not a "
                     "regular file\n")
    assert d.rule == "setuptools-copy-source-missing"
    assert "copy csrc/include/hip_compat.h into the package" in d.cause
    for built in ("build/lib.linux-x86_64-cpython-310/vllm/_moe_C.abi3.so",
                  "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so"):
        text = f"error: can't copy '{built}': doesn't exist or not a regular file\n"
        assert explain_text(text).rule != "setuptools-copy-source-missing", built


def test_license_classifiers_error_is_claimed_and_its_warning_is_not() -> None:
    d = explain_text("setuptools.errors.InvalidConfigError: License classifiers have been "
                     "superseded by license expressions (see https://peps.python.org/pep-0639/)"
                     ". Please remove:\n")
    assert (d.subject, d.rule) == ("setuptools", "setuptools-license-classifiers")
    assert "setuptools<77" in d.fix
    warning = explain_text("!!\n  *****\n  License classifiers are deprecated.\n  *****\n!!\n"
                           "Successfully built s6\n")
    assert warning.klass is None


def test_pyproject_validation_reads_the_summary_only_after_setuptools_heading() -> None:
    d = explain_text("ValueError: invalid pyproject.toml config: `project.license`.\n"
                     "configuration error: `project.license` must be valid exactly by one "
                     "definition (2 matches found):\n")
    assert d.rule == "setuptools-pyproject-invalid"
    assert d.cause.endswith("refused it: `project.license` must be valid exactly by one "
                            "definition (2 matches found):")
    alone = explain_text("configuration error: `project` must contain ['name'] properties\n")
    assert alone.rule != "setuptools-pyproject-invalid"


def test_build_ext_without_a_compiler_names_it_but_other_missing_files_are_not_it() -> None:
    for line, subject in (("error: [Errno 2] No such file or directory: 'gcc'\n", "gcc"),
                          ("error: command 'x86_64-linux-gnu-g++' failed: No such file or "
                           "directory\n", "gcc"),
                          ("error: command '/usr/bin/clang++-18' failed: No such file or "
                           "directory\n", "clang")):
        d = explain_text(line)
        assert (d.klass, d.subject, d.rule) == ("host-compiler", subject,
                                                "build-ext-compiler-not-found"), line
    other = explain_text("error: [Errno 2] No such file or directory: 'version.txt'\n")
    assert other.rule != "build-ext-compiler-not-found"


def test_permission_denied_reads_the_path_and_other_oserrors_are_not_it() -> None:
    d = explain_text("ERROR: Could not install packages due to an OSError: [Errno 13] "
                     "Permission denied: '/usr/local/lib/python3.10/dist-packages/torch'\n"
                     "Consider using the `--user` option or check the permissions.\n")
    assert (d.subject, d.rule) == ("pip", "pip-install-permission-denied")
    assert "could not write /usr/local/lib/python3.10/dist-packages/torch" in d.cause
    full = explain_text("ERROR: Could not install packages due to an OSError: [Errno 28] No "
                        "space left on device\n")
    assert full.rule != "pip-install-permission-denied" and full.klass == "disk-full"


def test_torch_from_its_source_checkout_is_named_and_an_echo_of_the_hint_is_not() -> None:
    d = explain_text('  File "/src/pytorch/torch/__init__.py", line 1055, in <module>\n'
                     "ImportError: Failed to load PyTorch C extensions:\n")
    assert (d.subject, d.rule) == ("torch", "torch-imported-from-source-tree")
    assert "-e ." in d.fix
    echoed = explain_text("+ grep -c 'Failed to load PyTorch C extensions:' import.log\n")
    assert echoed.klass is None


def test_distutils_missing_names_its_removal_and_setuptools() -> None:
    d = explain_text('  File "/src/ext/setup.py", line 4, in <module>\n'
                     "    from distutils.core import setup\n"
                     "ModuleNotFoundError: No module named 'distutils'\n", step="build")
    assert (d.subject, d.rule) == ("distutils", "no-module")
    assert "Python 3.12 removed it from the standard library" in d.cause
    assert "`python -m pip install setuptools`" in d.fix


def test_an_untrusted_http_index_is_named_with_its_host() -> None:
    d = explain_text("WARNING: The repository located at 10.0.0.5 is not a trusted or secure "
                     "host and is being ignored. If this repository is available via HTTPS we "
                     "recommend you use HTTPS instead.\n" + _NO_MATCH)
    assert (d.subject, d.rule) == ("torch", "pip-index-untrusted-host")
    assert "`--trusted-host 10.0.0.5`" in d.fix


def test_a_stalled_download_reads_file_and_bytes_and_the_old_timeout_shape() -> None:
    d = explain_text("  Downloading https://repo.radeon.com/rocm/manylinux/torch-2.6.0%2Brocm6"
                     ".4-cp312-cp312-linux_x86_64.whl (4512.0 MB)\nerror: incomplete-download\n\n"
                     "× Download failed after 6 attempts because not enough bytes were received "
                     "(1.2 GB/4.5 GB)\n")
    assert (d.subject, d.rule) == ("torch", "pip-download-incomplete")
    assert "stopped after 1.2 GB of 4.5 GB" in d.cause
    old = explain_text("pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool("
                       "host='download.pytorch.org', port=443): Read timed out.\n")
    assert old.rule == "pip-download-incomplete"
    assert "timed out reading from download.pytorch.org" in old.cause
    retried = explain_text("WARNING: Retrying (Retry(total=4, connect=None, read=None, "
                           "redirect=None, status=None)) after connection broken by "
                           "'ReadTimeoutError(\"HTTPSConnectionPool(host='pypi.org', port=443): "
                           "Read timed out. (read timeout=15)\")': /simple/torch/\n"
                           "Successfully installed torch-2.6.0\n")
    assert retried.klass is None


def test_setuptools_scm_without_git_reads_the_root() -> None:
    d = explain_text("      LookupError: setuptools-scm was unable to detect version for "
                     "/build/flash-attention-2.7.4.\n")
    assert (d.subject, d.rule) == ("setuptools_scm", "setuptools-scm-no-version")
    assert "and /build/flash-attention-2.7.4 has no git metadata" in d.cause
    assert "SETUPTOOLS_SCM_PRETEND_VERSION=<version>" in d.fix


def test_an_invalid_wheel_filename_reads_the_name_and_the_reason() -> None:
    d = explain_text("ERROR: Invalid wheel filename (invalid version): "
                     "'torch-rocm-cp312-cp312-linux_x86_64'\n")
    assert (d.subject, d.rule) == ("torch", "pip-invalid-wheel-filename")
    assert "(invalid version)" in d.cause
    echoed = explain_text("+ echo \"Invalid wheel filename (wrong number of parts): 'x'\"\n")
    assert echoed.klass is None


def test_a_module_without_the_attribute_is_read_but_not_a_circular_or_dunder_one() -> None:
    d = explain_text("AttributeError: module 'numpy' has no attribute 'float'.\n")
    assert (d.subject, d.rule) == ("numpy", "module-attribute-missing")
    assert "the installed numpy has no attribute 'float'" in d.cause
    for text in ("AttributeError: partially initialized module 'torch' has no attribute "
                 "'cuda' (most likely due to a circular import)\n",
                 "AttributeError: module 'vllm' has no attribute '__version__'\n",
                 "AttributeError: '_OpNamespace' '_C' object has no attribute 'silu_and_mul'\n"):
        assert explain_text(text).rule != "module-attribute-missing", text
    impimporter = explain_text("AttributeError: module 'pkgutil' has no attribute "
                               "'ImpImporter'. Did you mean: 'zipimporter'?\n")
    assert impimporter.rule == "setuptools-impimporter"


def test_cannot_import_from_a_source_tree_module_claims_nothing() -> None:
    """A name missing from a checkout's own module is no installed-version question."""
    found = explain_text("ImportError: cannot import name 'foo' from 'vllm.utils' "
                         "(/home/u/vllm/vllm/utils.py)\n")
    assert found.klass is None
    found = explain_text("ImportError: cannot import name 'foo' from 'torch' "
                         "(/venv/lib/python3.12/site-packages/torch/__init__.py)\n")
    assert (found.klass, found.subject, found.rule) == ("python-packaging", "torch",
                                                        "import-name-missing")
