"""Packaging and ROCm-install families of r16's misses, read by shape (issue 40, devpk8):
apt's indented unmet-dependency lines and its problem resolver's trace of an installed pin
(Debian/apt), the HIP runtime's "Failed to load COMGR library." (ROCm/clr), pip asked for
TheRock's old selector name rocm-sdk, TheRock's PyTorch test-source version check, an
undefined CPython C-API symbol, and torch's dispatcher without a GPU kernel for an extension's
operator; with values other than the r16 cases', and the look-alikes that must claim nothing."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_APT = ("The following packages have unmet dependencies:\n"
        " rocm-dev : Depends: rocm-core (= 6.4.1.60401-83~22.04) but it is not going to be "
        "installed\n"
        "            Depends: {dep} (= {want}) but {other} is to be installed\n")

_RESOLVER = ("Starting pkgProblemResolver with broken count: 1\n"
             "Investigating (0) rocm-hip-sdk:amd64 < none -> 6.3.0.60300-39~22.04 @un puN Ib >\n"
             "Broken rocm-hip-sdk:amd64 Depends on {dep}:amd64 < {current} @ii mK > "
             "(= {want})\n")

_DISPATCH = ("NotImplementedError: Could not run '{op}' with arguments from the '{backend}' "
             "backend. This could be because the operator doesn't exist for this backend, or "
             "was omitted during the selective/custom build process (if using custom build).")


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words", "step"), [
    # apt: a further dependency on an indented line takes its package from the line above
    (_APT.format(dep="hipcc", want="1.1.1.60401-83~22.04", other="5.7.1-3"), "rocm-install",
     "hipcc", "apt-rocm-unmet-dependency",
     ("rocm-dev needs hipcc = 1.1.1.60401-83~22.04", "apt chose hipcc 5.7.1-3"), "install"),
    # apt's resolver trace: an installed package of another version in the way of a pin
    (_RESOLVER.format(dep="rocm-smi-lib", current="5.7.0-1", want="7.4.0.60300-39~22.04"),
     "rocm-install", "rocm-smi-lib", "apt-rocm-resolver-installed-pin",
     ("rocm-smi-lib 5.7.0-1 is already installed", "`sudo apt remove rocm-smi-lib`"),
     "install"),
    # clr: the bare line (AMD_LOG_LEVEL prefix of another thread id) and with its prefix
    (":3:comgrctx.cpp:66: Failed to load COMGR library.", "rocm-install", "amd_comgr",
     "comgr-library-not-loaded", ("libamd_comgr.so.2", "ldconfig -p | grep amd_comgr"),
     "verify"),
    # pip: the old selector with other extras, and the "from versions: none" wording
    ("ERROR: Could not find a version that satisfies the requirement rocm-sdk[libraries] "
     "(from versions: none)", "python-packaging", "rocm-sdk", "rocm-sdk-old-selector-name",
     ('pip install "rocm[libraries]"', "renamed rocm"), "rocm-sdk"),
    ("ERROR: No matching distribution found for rocm-sdk==7.0.0", "python-packaging",
     "rocm-sdk", "rocm-sdk-old-selector-name", ('"rocm[libraries,devel]"',), "rocm-sdk"),
    # TheRock's PyTorch test runner
    ("[ERROR] PyTorch version mismatch!\n  Test sources: 2.10 (from /src/pytorch/version.txt: "
     "2.10.0a0)\n  Installed wheel: 2.11 (2.11.0+rocm7.12.0)", "python-packaging", "torch",
     "therock-torch-test-sources-mismatch", ("version mismatch", "torch wheel"), "verify"),
    # a CPython C-API symbol: a versioned module and a stable-ABI one
    ("ImportError: /venv/lib/python3.9/site-packages/fast/_c.cpython-312-x86_64-linux-gnu.so: "
     "undefined symbol: PyUnicode_AsUTF8AndSize", "import", "PyUnicode_AsUTF8AndSize",
     "undefined-symbol-python-c-api", ("(its file name says cpython-312)",
                                       "Python version it was built for"), "verify"),
    ("OSError: /x/_ext.abi3.so: undefined symbol: _Py_Dealloc", "import", "_Py_Dealloc",
     "undefined-symbol-python-c-api", ("stable ABI",), "verify"),
    # torch's dispatcher: another extension's operator, and a HIP-named backend
    (_DISPATCH.format(op="torchvision::nms", backend="CUDA"), "python-packaging",
     "torchvision", "extension-op-no-gpu-kernel",
     ("torchvision::nms", "'CUDA' backend", "pip show torchvision torch"), "verify"),
    (_DISPATCH.format(op="fbgemm::jagged_to_padded_dense.default", backend="HIP"),
     "python-packaging", "fbgemm", "extension-op-no-gpu-kernel",
     ("fbgemm::jagged_to_padded_dense",), "verify"),
])
def test_family_reads_its_value(text: str, klass: str, subject: str, rule: str,
                                words: tuple[str, ...], step: str) -> None:
    assert_reads(text, klass, subject, rule, words, step=step)


@pytest.mark.parametrize(("text", "step"), [
    # apt: an indented dependency of a package that is not ROCm's, and a resolver trace where
    # nothing is installed in the way (the repository's candidate is the pinned one)
    ("The following packages have unmet dependencies:\n libfoo-dev : Depends: libbar (= 2.0) "
     "but it is not going to be installed\n              Depends: libbaz (= 1.0) but 1.1 is to "
     "be installed", "install"),
    ("Broken rocm:amd64 Depends on rocm-cmake:amd64 < none | 0.14.0.70001-42~24.04 @un uH > "
     "(= 0.14.0.70001-42~24.04)", "install"),
    # clr's other comgr line: a function missing from a comgr that loaded (another cause)
    (":1:comgrctx.hpp:141: Failed to load COMGR function amd_comgr_get_isa_count", "verify"),
    # the runner's warning when version.txt is missing, and the echoed option
    ("[WARNING] /src/pytorch/version.txt not found — cannot verify test source version "
     "matches installed wheel. Proceeding anyway.", "verify"),
    # torch's own operator, and another backend (Meta, CPU) for an extension's operator
    (_DISPATCH.format(op="aten::_foobar", backend="CUDA"), "verify"),
    (_DISPATCH.format(op="xformers::efficient_attention_forward_ck", backend="CPU"), "verify"),
])
def test_look_alike_claims_nothing(text: str, step: str) -> None:
    assert explain_text(text, step=step).klass is None


@pytest.mark.parametrize("line", [
    # TheRock's packages that kept their names, and the renamed selector: pip's own answer
    "ERROR: No matching distribution found for rocm-sdk-core==7.9.0",
    "ERROR: No matching distribution found for rocm[devel]==7.9.0",
])
def test_other_therock_names_are_not_the_old_selector(line: str) -> None:
    found = explain_text(line, step="rocm-sdk")
    assert found.rule != "rocm-sdk-old-selector-name"
    assert "renamed" not in found.cause


@pytest.mark.parametrize(("line", "step"), [
    # the linker's error for a Python symbol (link time: link.py's), and a name that is not
    # of CPython's C API (no underscore after the area): the loader's general reading
    ("ld.lld: error: undefined symbol: PyType_FromMetaclass", "build"),
    ("OSError: /x/libpyfoo.so: undefined symbol: Pyfoo", "verify"),
])
def test_other_undefined_symbols_are_not_the_python_c_api(line: str, step: str) -> None:
    found = explain_text(line, step=step)
    assert found.rule != "undefined-symbol-python-c-api"
    assert "C API" not in found.cause
