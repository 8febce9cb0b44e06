"""Building a Python package: setuptools' pkg_resources and bdist_wheel, packaging too
old, build isolation that hides the installed torch, a missing build dependency, and a
launcher script left from an older install.

Owns: the parsers (rules) for these messages; each reads its values out of the line and
declines where the line alone does not prove the cause. Must not: read files, run programs
or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _pkg_resources(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="pkg_resources", cause="the code imports pkg_resources, which "
                   "setuptools 82 removed (and a venv may have no setuptools at all)",
                   fix="pin setuptools below 82 in the build venv (`python -m pip install "
                   "'setuptools<82'`; with build isolation: PIP_CONSTRAINT with setuptools<82), "
                   "or use a release whose code no longer imports pkg_resources")


def _isolated_torch(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="torch", cause="pip's build isolation installed another torch (the "
                   "one PyPI serves, a CUDA build) into its temporary build environment "
                   f"({match.group('env')}), so the extension was configured against it, not "
                   "against your ROCm torch", fix="install your ROCm torch first, then build the "
                   "extension with `pip install --no-build-isolation .` (and its build "
                   "requirements installed by hand), so it compiles against that torch")


_REQUIREMENT = re.compile(r"^\s*(?P<pkg>[A-Za-z][\w.-]*)\s*(?P<spec>[<>=!~][^;\s]*)?\s*$")


def _missing_build_dependency(match: re.Match[str], view: LineView) -> Reading | None:
    if not any("Missing dependencies" in line for line in view.previous[-4:]):
        return None
    pkg, spec = match.group("pkg"), match.group("spec") or ""
    if pkg.lower() == "cmake":
        return Reading(subject="cmake", klass="cmake",
                       cause=f"the package's build requires CMake {spec or '(any)'}, and the "
                             "CMake in the build environment is outside that range (pypa build "
                             "checks it with --no-isolation)",
                       fix=f"install a CMake in range into the build venv (`python -m pip "
                           f"install 'cmake{spec}'`), or build a commit of the package whose "
                           "requirements accept the installed CMake")
    return Reading(subject=pkg.lower(), cause=f"the build requirement {pkg}{spec} is missing "
                   "from the build environment (pypa build --no-isolation checks them)",
                   fix=f"install it into the build venv (`python -m pip install '{pkg}{spec}'`), "
                   "or build with isolation")


def _stale_launcher(match: re.Match[str], view: LineView) -> Reading | None:
    python, script = match.group("python"), match.group("script")
    name = script.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".exe")
    return Reading(
        subject=name, klass="rocm-install" if name.startswith("rocm") else "",
        cause=f"the {name} launcher still points at {python}, a Python that is no longer "
        "there: the environment was moved or renamed after the package was installed",
        fix=f"reinstall the package that provides {name} in the environment where it is now "
            "(`pip install --force-reinstall --no-deps <package>`), or recreate the "
            "environment instead of renaming it")


def _impimporter(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="setuptools",
        cause="an old setuptools/pkg_resources (or pip) runs on Python 3.12+, which removed "
              "pkgutil.ImpImporter",
        fix="upgrade the packaging tools in the environment (`python -m pip install -U pip "
            "setuptools wheel`), or use a Python version the pinned tools support")


def _bdist_wheel(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="wheel",
        cause="setup.py was asked to build a wheel but the wheel package (bdist_wheel) is not "
              "installed in the environment that runs it",
        fix="install it first (`python -m pip install wheel`, or an up-to-date setuptools, "
            "which provides bdist_wheel itself), then rerun")


def _pkg_resources_packaging(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="setuptools",
        cause="the code imports `packaging` from pkg_resources, which newer setuptools no "
              "longer exposes (an older torch's cpp_extension does this)",
        fix="pin setuptools below 70 in the build environment (`python -m pip install "
            "'setuptools<70'`; with build isolation: PIP_CONSTRAINT), or use a torch whose "
            "cpp_extension imports packaging directly")


def _packaging_too_old(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="packaging",
        cause="setuptools calls packaging's canonicalize_version(strip_trailing_zero=...), "
              "which the installed packaging is too old to have: setuptools was upgraded and "
              "packaging was not",
        fix="upgrade packaging next to setuptools (`python -m pip install -U packaging "
            "setuptools`), or pin setuptools to a release that matches the installed "
            "packaging")


RULES: tuple[Rule, ...] = (
    Rule(id="pkg-resources", klass="python-packaging",
         triggers=("pkg_resources",),
         pattern=rx(r"No module named '?pkg_resources'?"),
         read=_pkg_resources, source="setuptools 82 changelog (pkg_resources removed)"),
    Rule(id="isolated-torch", klass="python-packaging",
         triggers=("pip-build-env",),
         pattern=rx(r"(?P<env>/tmp/pip-build-env-[\w-]+)/overlay/\S*site-packages/torch/"),
         read=_isolated_torch, source="pip's PEP 517 build isolation; vllm-project/vllm#17445"),
    Rule(id="build-missing-dependency", klass="python-packaging",
         triggers=("<", ">", "=", "~"),
         pattern=_REQUIREMENT,
         read=_missing_build_dependency, source="pypa/build: 'Missing dependencies:' under "
         "--no-isolation; ROCm/pytorch#3098"),
    Rule(id="stale-launcher", klass="python-packaging",
         triggers=("Fatal error in launcher",),
         pattern=rx(r"Fatal error in launcher: Unable to create process using "
                     r"'\"(?P<python>[^\"]+)\"\s+\"(?P<script>[^\"]+)\""),
         read=_stale_launcher, source="pip's Windows script launcher (distlib); "
         "patientx-cfz/comfyui-rocm#30"),
    Rule(id="setuptools-impimporter", klass="python-packaging",
         triggers=("ImpImporter",),
         pattern=rx(r"module 'pkgutil' has no attribute 'ImpImporter'"),
         read=_impimporter, source="CPython 3.12 removed pkgutil.ImpImporter (What's New in "
         "3.12); old pkg_resources uses it"),
    Rule(id="no-bdist-wheel", klass="python-packaging", tier=2,
         triggers=("invalid command 'bdist_wheel'",),
         pattern=rx(r"invalid command 'bdist_wheel'"),
         read=_bdist_wheel, source="distutils' command lookup when the wheel package is absent"),
    Rule(id="pkg-resources-packaging", klass="python-packaging",
         triggers=("from 'pkg_resources'",),
         pattern=rx(r"cannot import name 'packaging' from 'pkg_resources'"),
         read=_pkg_resources_packaging, source="pypa/setuptools#4385 (v70.0.0 removed "
         "pkg_resources.packaging; torch 2.1's cpp_extension imports it)"),
    Rule(id="packaging-too-old", klass="python-packaging",
         triggers=("strip_trailing_zero",),
         pattern=rx(r"canonicalize_version\(\) got an unexpected keyword argument "
                     r"'strip_trailing_zero'"),
         read=_packaging_too_old, source="pypa/setuptools#4483 (setuptools >= 71 with an "
         "older packaging)"),
)
