"""Python packaging families of r15's misses, read by shape (issue 40, devpk7): conda's
ResolvePackageNotFound list (conda/exceptions.py), CPython's TypeError for
importlib.metadata.MetadataPathFinder.invalidate_caches() called on the class, and uv's
"there is no version of" report wrapped inside its markers, with values other than the r15
cases', and the look-alikes that must claim nothing."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_CONDA = ("Solving environment: failed with initial frozen solve. Retrying with flexible "
          "solve.\n\nResolvePackageNotFound: \n  - {chain}\n  - python=3.7")

_FINDER = ("Traceback (most recent call last):\n"
           "  File \"/usr/bin/tool\", line 8, in <module>\n"
           "    sys.exit(main())\n"
           "  File \"{path}\", line 40, in refresh\n"
           "    importlib.metadata.MetadataPathFinder.invalidate_caches()\n"
           "TypeError: MetadataPathFinder.invalidate_caches() missing 1 required positional "
           "argument: 'cls'")

_UV_OPEN = ("  ╰─▶ Because there is no version of {name}{{python_full_version < '3.12'\n"
            "      and platform_system == 'Linux'}}==3.0.0 and torch==2.4.0+rocm6.1 depends "
            "on {name}, we can conclude that torch==2.4.0+rocm6.1 cannot be used.")


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words", "step"), [
    # conda: the spec not found, and a chain whose last spec is the missing one
    (_CONDA.format(chain="cudatoolkit=11.8"), "python-packaging", "cudatoolkit",
     "conda-resolve-package-not-found", ("cudatoolkit=11.8", "conda search"), "venv"),
    (_CONDA.format(chain="pytorch==2.1.0 -> libblas[build=*mkl]"), "python-packaging",
     "libblas", "conda-resolve-package-not-found",
     ("libblas[build=*mkl]", "through pytorch==2.1.0"), "venv"),
    # CPython: the calling package from the last site-packages frame
    (_FINDER.format(path="/venv/lib/python3.10/site-packages/wheelkit/cache.py"),
     "python-packaging", "wheelkit", "importlib-metadata-finder-invalidate-caches",
     ("wheelkit calls", "importlib.invalidate_caches()"), "rocm-sdk"),
    (_FINDER.format(path="C:\\py\\Lib\\site-packages\\rocm_sdk\\_devel.py"),
     "python-packaging", "rocm_sdk", "importlib-metadata-finder-invalidate-caches",
     ("rocm packages built after",), "rocm-sdk"),
    # uv's report wrapped inside the markers: PyTorch's ROCm Triton, and another package
    (_UV_OPEN.format(name="pytorch-triton-rocm"), "triton", "triton", "uv-no-version",
     ("pytorch-triton-rocm", "[tool.uv.sources]"), "venv"),
    (_UV_OPEN.format(name="numpy"), "python-packaging", "numpy", "uv-no-version",
     ("uv's resolver found no release of numpy",), "venv"),
])
def test_family_reads_its_value(text: str, klass: str, subject: str, rule: str,
                                words: tuple[str, ...], step: str) -> None:
    assert_reads(text, klass, subject, rule, words, step=step)


@pytest.mark.parametrize(("text", "step"), [
    # a Markdown or YAML list item, and conda's list with no heading before it
    ("  - conda==23.3.1", "venv"),
    ("dependencies:\n  - python=3.10\n  - pip", "venv"),
    # the TypeError from the user's own script (no site-packages frame), or only echoed
    (_FINDER.format(path="/home/me/refresh.py"), "rocm-sdk"),
    ("grep -rn 'MetadataPathFinder.invalidate_caches()' site-packages/", "rocm-sdk"),
    # another missing-argument TypeError in rocm_sdk
    ("  File \"/venv/lib/python3.10/site-packages/rocm_sdk/_devel.py\", line 9, in f\n"
     "TypeError: f() missing 1 required positional argument: 'path'", "rocm-sdk"),
])
def test_look_alike_claims_nothing(text: str, step: str) -> None:
    assert explain_text(text, step=step).klass is None
