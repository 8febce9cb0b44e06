"""Building a Python package: setuptools' pkg_resources and bdist_wheel, packaging too
old, build isolation that hides the installed torch, a missing build dependency, and a
launcher script left from an older install.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


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


RULES: tuple[Rule, ...] = (
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
)
