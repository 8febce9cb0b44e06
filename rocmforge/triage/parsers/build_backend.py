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


_COMPILER = re.compile(r"^(?:[\w.]+-)*(?P<kind>gcc|g\+\+|cc|c\+\+|clang|clang\+\+)(?:-\d+)?$")


def _compiler_not_found(match: re.Match[str], view: LineView) -> Reading | None:
    program = match.group("prog") or match.group("prog2")
    name = program.replace("\\", "/").rsplit("/", 1)[-1]
    compiler = _COMPILER.match(name)
    if compiler is None:
        return None  # another file or program: its own family
    family = "clang" if compiler.group("kind").startswith("clang") else "gcc"
    return Reading(
        subject=family, klass="host-compiler",
        cause=f"setuptools' build_ext ran the C/C++ compiler {program} (the one Python's "
              "sysconfig names, or CC/CXX) and there is no such program on PATH: no compiler "
              "is installed in this system or container",
        fix=f"install the compiler (`sudo apt install build-essential` on Debian/Ubuntu, "
            f"`sudo dnf install gcc gcc-c++` on Fedora/RHEL), or point CC and CXX at one that "
            f"is installed, then rebuild; `{name} --version` must run in the same shell")


_BUILT = re.compile(r"(?:^|/)build/|\.(?:so|pyd|dll|dylib)$|\.so\.")


def _copy_source_missing(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("file").replace("\\", "/")
    if _BUILT.search(path):
        return None  # a build product the compile step did not make: that step's failure
    return Reading(
        subject="setuptools",
        cause=f"the build was told to copy {path} into the package (package_data, data_files "
              "or a header list), and there is no such file in the source tree: a submodule "
              "or generated file that is not there, or a path the project mistyped",
        fix=f"make the file exist before building (`git submodule update --init "
            f"--recursive`, or the project's generation step), or correct the entry in "
            f"setup.py/pyproject.toml that names {path}, then rebuild")


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
    Rule(id="build-ext-compiler-not-found", klass="host-compiler",
         triggers=("No such file or directory",),
         pattern=rx(r"^error: (?:\[Errno 2\] No such file or directory: '(?P<prog>[^']+)'|"
                    r"command '(?P<prog2>[^']+)' failed: No such file or directory)$"),
         read=_compiler_not_found,
         source="pypa/setuptools@7d531288b7c8708d4cc186213da93eaf5d11833d:setuptools/_distutils/"
         "spawn.py (_translate_errors: \"command {cmd[0]!r} failed: {exc.args[-1]}\"); setuptools "
         "84.2.1 as installed here prints the OSError itself; reproduced: make/devpy.sh"),
    Rule(id="setuptools-copy-source-missing", klass="python-packaging",
         triggers=("doesn't exist or not a regular file",),
         pattern=rx(r"^(?:error: )?can't copy '(?P<file>[^']+)': doesn't exist or not a "
                    r"regular file"),
         read=_copy_source_missing,
         source="pypa/setuptools@7d531288b7c8708d4cc186213da93eaf5d11833d:setuptools/_distutils/"
         "file_util.py (copy_file: \"can't copy '{src}': doesn't exist or not a regular "
         "file\"); reproduced: make/devpy.sh; a build product (vllm-project/vllm#19019's "
         "_moe_C.abi3.so) is another step's failure"),
)
