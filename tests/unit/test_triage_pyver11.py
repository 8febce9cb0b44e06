"""The Python-side readings widened for Python 3.12 and 3.13 (d11, pyver11): modules CPython
removed from its standard library, torch's own _C missing for this Python, a wheel tagged for
the free-threaded build, and 3.13's hint naming a user's file that hides a module. The logs are
the words the real interpreters printed here (tests/failures/make/pyver11.sh); each test
asserts the exact class, subject and rule, and the look-alikes that must not be read so."""

from __future__ import annotations

from rocmforge.triage import explain_text


def _tb(*frames: str, last: str) -> str:
    return "\n".join(["Traceback (most recent call last):", *frames, last]) + "\n"


_SETUP_IMP = _tb('  File "/home/user/proj/old/setup.py", line 1, in <module>', "    import imp",
                 last="ModuleNotFoundError: No module named 'imp'")


def test_imp_under_312_is_a_removed_standard_module_not_another_interpreter() -> None:
    d = explain_text(_SETUP_IMP, step="build")
    assert (d.klass, d.subject, d.rule) == ("python-packaging", "imp", "no-module")
    assert "Python 3.12 removed from the standard library" in d.cause
    assert "another interpreter" not in d.cause
    assert "a Python below 3.12" in d.fix


def test_a_module_removed_in_313_names_313() -> None:
    log = _tb('  File "/home/user/proj/old/setup.py", line 1, in <module>', "    import pipes",
              last="ModuleNotFoundError: No module named 'pipes'")
    d = explain_text(log, step="build")
    assert (d.klass, d.subject, d.rule) == ("python-packaging", "pipes", "no-module")
    assert "Python 3.13 removed" in d.cause


def test_a_submodule_of_a_package_named_like_a_removed_module_is_not_read_so() -> None:
    # 'cgi.handlers' is a module of someone's own package cgi: not the removed stdlib cgi.
    d = explain_text("ModuleNotFoundError: No module named 'cgi.handlers'\n", step="build")
    assert "removed from the standard library" not in d.cause


def test_a_module_that_was_never_in_the_standard_library_keeps_its_reading() -> None:
    log = _SETUP_IMP.replace("imp", "yaml")
    d = explain_text(log, step="build")
    assert (d.subject, d.rule) == ("yaml", "no-module")
    assert "removed" not in d.cause
    assert "pyyaml" in d.fix


_TORCH_C_313 = _tb('  File "<string>", line 1, in <module>', "    import torch",
                   '  File "/home/user/proj/pkg/torch/__init__.py", line 4, in <module>',
                   "    from torch._C import *  # noqa: F403",
                   "    ^^^^^^^^^^^^^^^^^^^^^^",
                   last="ModuleNotFoundError: No module named 'torch._C'")


def test_torch_c_missing_from_torch_init_is_torch_built_for_another_python() -> None:
    d = explain_text(_TORCH_C_313, step="verify")
    assert (d.klass, d.subject, d.rule) == ("python-packaging", "torch", "no-module")
    assert "compiled core torch._C was not, for this Python" in d.cause
    assert "build isolation" not in d.cause
    assert "ls <torch dir>/_C*.so" in d.fix


def test_torch_c_missing_without_torch_init_frame_is_not_read_as_the_core_missing() -> None:
    # A build script's own `import torch._C` with no torch package at all: the old reading.
    log = _tb('  File "<string>", line 1, in <module>',
              last="ModuleNotFoundError: No module named 'torch._C'")
    d = explain_text(log, step="verify")
    assert d.subject == "torch"
    assert "compiled core" not in d.cause


_PIP_T = ("ERROR: flash_attn-2.7.0-cp313-cp313t-linux_x86_64.whl is not a supported wheel on "
          "this platform.\n")


def test_a_free_threaded_wheel_refused_names_the_abi_not_the_python_version() -> None:
    d = explain_text(_PIP_T, step="install")
    assert (d.klass, d.subject, d.rule) == ("python-packaging", "flash-attn",
                                             "pip-unsupported-wheel")
    assert "ABI tag cp313t is CPython's free-threaded build" in d.cause
    assert "install the wheel whose ABI tag is cp313 (no t)" in d.fix


def test_a_default_build_wheel_for_another_version_keeps_the_version_reading() -> None:
    d = explain_text(_PIP_T.replace("cp313-cp313t", "cp311-cp311"), step="install")
    assert (d.subject, d.rule) == ("flash-attn", "pip-unsupported-wheel")
    assert "another Python version" in d.cause
    assert "free-threaded" not in d.cause


_SHADOW = _tb('  File "/home/user/proj/check_gpu.py", line 1, in <module>', "    import torch",
              '  File "/home/user/proj/torch.py", line 2, in <module>',
              "    print(torch.cuda.is_available())", "          ^^^^^^^^^^",
              last="AttributeError: module 'torch' has no attribute 'cuda' (consider renaming "
              "'/home/user/proj/torch.py' if it has the same name as a third-party module you "
              "intended to import)")


def test_313_hint_naming_a_local_torch_py_is_the_file_not_a_torch_version() -> None:
    d = explain_text(_SHADOW, step="verify")
    assert (d.klass, d.subject, d.rule) == ("python-packaging", "torch",
                                             "module-shadowed-by-local-file")
    assert "imported the file /home/user/proj/torch.py as torch" in d.cause
    assert d.fix.startswith("rename /home/user/proj/torch.py")


def test_313_hint_for_a_standard_library_name() -> None:
    d = explain_text("AttributeError: module 'random' has no attribute 'randint' (consider "
                     "renaming '/home/user/proj/rnd/random.py' since it has the same name as "
                     "the standard library module named 'random' and the import system gives "
                     "it precedence)\n", step="verify")
    assert (d.subject, d.rule) == ("random", "module-shadowed-by-local-file")


def test_311_partially_initialized_module_proves_no_hiding_file() -> None:
    log = _SHADOW.replace("module 'torch'", "partially initialized module 'torch'").split(
        " (consider")[0] + " (most likely due to a circular import)\n"
    assert explain_text(log, step="verify").klass is None


def test_a_plain_missing_attribute_keeps_the_version_reading() -> None:
    d = explain_text("AttributeError: module 'torch' has no attribute 'rocm_version'. Did you "
                     "mean: 'rocm_version_info'?\n", step="verify")
    assert (d.subject, d.rule) == ("torch", "module-attribute-missing")
