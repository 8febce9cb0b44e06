"""The PyTorch-for-ROCm build environment, and printing it for shells and CI.

Owns: the ordered variables a build needs (pytorch-rocm-build.md §1.4: USE_ROCM, USE_CUDA=0 so a
CUDA toolkit on the same host does not make configure fail, PYTORCH_ROCM_ARCH, ROCM_PATH/HIP_PATH,
HIP_PLATFORM=amd, MAX_JOBS), the MAX_JOBS rule, and safe formatting for sh, fish, JSON and
$GITHUB_ENV. Pure: no os.environ, no subprocess, no files. Must not: execute anything.

MAX_JOBS rule: `min(cores, floor(memory_total_gib / per_job_gib))`, at least 1. Each parallel
HIP compile of PyTorch's heaviest translation units (flash attention) takes about 4.5 GB
(pytorch/pytorch#124018; reference §5.3 suggests >= 3-4 GB per job), so cores alone over-commit
memory and the OOM killer ends the build hours in. `per_job_gib` is the `mem_per_job_gib`
setting (default 4.5, config/defaults.toml); an explicit `max_jobs` setting wins.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rocmforge.errors import UsageError

if TYPE_CHECKING:
    from rocmforge.knowledge.cache_backends import CacheMode
    from rocmforge.knowledge.targets import TargetId
    from rocmforge.probes.facts import Facts
    from rocmforge.settings import Settings

FORMATS = ("sh", "fish", "json", "github")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, kw_only=True)
class BuildEnv:
    """Ordered (name, value) pairs; later entries were set deliberately over earlier ones."""

    items: tuple[tuple[str, str], ...]

    def as_dict(self) -> dict[str, str]:
        return dict(self.items)

    def get(self, name: str, default: str = "") -> str:
        return self.as_dict().get(name, default)


def max_jobs(cores: int, mem_total_gib: float, per_job_gib: float) -> int:
    """Parallel compile jobs that fit both the CPUs and the memory (rule in the module doc)."""
    by_memory = math.floor(mem_total_gib / per_job_gib) if per_job_gib > 0 else cores
    return max(1, min(max(cores, 1), by_memory))


def compiler_cache_env(
    mode: CacheMode,
    found: Mapping[str, str],
    *,
    rocm_version: str = "",
    hip_launcher_min_rocm: str = "",
) -> list[tuple[str, str]]:
    """Launcher variables for the `cache` setting (auto, ccache, sccache, none).

    CMake (3.17+) takes `CMAKE_<LANG>_COMPILER_LAUNCHER` from the environment, which covers the
    host C/C++ (and CMake-HIP) compiles. hipcc's own device compiles go through
    `HIP_CLANG_LAUNCHER` only from the ROCm release config/build.toml names; before it they are
    not cached, whatever the setting. `auto` takes sccache, else ccache, else nothing; naming a
    cache that is not installed is an error rather than a silent uncached build.
    """
    name = chosen_cache(mode, found)
    if not name:
        return []
    launcher = found[name]
    items = [
        ("CMAKE_C_COMPILER_LAUNCHER", launcher),
        ("CMAKE_CXX_COMPILER_LAUNCHER", launcher),
        ("CMAKE_HIP_COMPILER_LAUNCHER", launcher),
    ]
    if hip_launcher_min_rocm and rocm_version and _at_least(rocm_version, hip_launcher_min_rocm):
        items.append(("HIP_CLANG_LAUNCHER", launcher))
    return items


def chosen_cache(mode: CacheMode, found: Mapping[str, str]) -> str:
    """The cache the `cache` setting picks ("" for none): `auto` takes sccache, else ccache,
    else nothing; a named cache that is not installed is a UsageError."""
    if mode == "none":
        return ""
    if mode == "auto":
        return next((n for n in ("sccache", "ccache") if n in found), "")
    if mode not in found:
        raise UsageError(
            f"The cache setting asks for {mode}, but {mode} is not on PATH",
            "a build that silently runs uncached takes hours longer than the user planned",
            f"install it (`apt-get install {mode}`), or set cache to auto or none "
            f"(ROCMFORGE_CACHE=none)",
        )
    return mode


def _at_least(version: str, minimum: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) >= Version(minimum)
    except InvalidVersion:
        return False


def build_environment(
    settings: Settings,
    facts: Facts,
    targets: Sequence[TargetId],
    cc: str = "",
    cxx: str = "",
    *,
    hip_launcher_min_rocm: str = "",
    remote_cache: Sequence[tuple[str, str]] = (),
) -> BuildEnv:
    """The environment for `settings` on the machine `facts` describes, for `targets`."""
    from rocmforge.errors import ProbeError
    from rocmforge.knowledge.targets import targets_for_cmake

    if facts.rocm is None:
        raise ProbeError(
            "No ROCm install was found, so there is no ROCM_PATH to export",
            facts.rocm_problem or "looked in /opt/rocm*, $ROCM_PATH, $HIP_PATH and /usr",
            "install ROCm and pass --rocm-path /opt/rocm-X.Y.Z (see `invoke doctor`)",
        )
    if not targets:
        raise UsageError(
            "No GPU target to build for",
            "no --arch was given and no AMD GPU was found on this machine",
            "pass --arch, e.g. `invoke env --arch gfx1100` (aliases like mi300 or rdna3 work too)",
        )
    root = str(facts.rocm.root)
    jobs = settings.max_jobs or max_jobs(
        facts.system.cores, facts.system.mem_total_gib, settings.mem_per_job_gib
    )
    items: list[tuple[str, str]] = [
        ("USE_ROCM", "1"),
        ("USE_CUDA", "0"),
        ("PYTORCH_ROCM_ARCH", targets_for_cmake(targets)),
        ("ROCM_PATH", root),
        ("ROCM_HOME", root),
        ("HIP_PATH", root),
        ("HIP_PLATFORM", "amd"),
        ("MAX_JOBS", str(jobs)),
    ]
    if settings.cmake_policy_minimum:
        # CMake 4 against old cmake_minimum_required in submodules (config/defaults.toml).
        if not re.fullmatch(r"3\.\d+(?:\.\d+)?|[4-9]\.\d+(?:\.\d+)?",
                            settings.cmake_policy_minimum):
            raise UsageError(
                f"cmake_policy_minimum is {settings.cmake_policy_minimum!r}, not a CMake version",
                "it becomes CMAKE_POLICY_VERSION_MINIMUM, which CMake 4 reads as a policy "
                "version such as 3.5",
                "set it to 3.5 (the default) or to \"\" to leave the variable unset",
            )
        items.append(("CMAKE_POLICY_VERSION_MINIMUM", settings.cmake_policy_minimum))
    if cc:
        items.append(("CC", cc))
    if cxx:
        items.append(("CXX", cxx))
    items += compiler_cache_env(
        settings.cache,
        getattr(facts.system, "compiler_caches", {}) or {},
        rocm_version=str(getattr(facts.rocm, "version", "") or ""),
        hip_launcher_min_rocm=hip_launcher_min_rocm,
    )
    # The shared cache's own variables (plan.cache_env.remote_cache_env), after its launchers.
    items += list(remote_cache)
    for name, value in settings.build_env.items():
        items = [(k, v) for k, v in items if k != name]
        items.append((str(name), str(value)))
    for name, _ in items:
        check_name(name)
    return BuildEnv(items=tuple(items))


def check_name(name: str) -> None:
    if not _NAME.match(name):
        raise UsageError(
            f"{name!r} is not a valid environment variable name",
            "names must be letters, digits and underscores, not starting with a digit, or the "
            "printed exports would not be safe to eval",
            "rename it in build_env (invoke.yaml rocm.build_env or ROCMFORGE_BUILD_ENV)",
        )


def format_env(env: BuildEnv | Mapping[str, str], fmt: str) -> str:
    """The environment as text for `eval "$(...)"` (sh), `... | source` (fish), a JSON object,
    or `KEY=value` lines to append to $GITHUB_ENV."""
    items = list(env.items) if isinstance(env, BuildEnv) else list(env.items())
    for name, _ in items:
        check_name(name)
    if fmt == "sh":
        return "".join(f"export {k}={shlex.quote(v)}\n" for k, v in items)
    if fmt == "fish":
        return "".join(f"set -gx {k} {fish_quote(v)}\n" for k, v in items)
    if fmt == "json":
        return json.dumps(dict(items), indent=2) + "\n"
    if fmt == "github":
        for name, value in items:
            if "\n" in value or "\r" in value:
                raise UsageError(
                    f"The value of {name} contains a line break, which $GITHUB_ENV's KEY=value "
                    "form cannot carry",
                    "a second line would be read as another variable",
                    "remove the line break from the value, or use --format json",
                )
        return "".join(f"{k}={v}\n" for k, v in items)
    raise UsageError(
        f"Unknown format {fmt!r}",
        "the environment can be printed for sh, fish, json or github",
        "pass --format sh (or fish, json, github)",
    )


def fish_quote(value: str) -> str:
    """fish single quotes: only backslash and the quote itself are escaped inside them."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def inherited_variables(
    environ: Mapping[str, str], rule: Mapping[str, object], targets: Sequence[TargetId]
) -> dict[str, str]:
    """The calling shell's variables that PyTorch's build reads (config/build.toml [inherit]),
    copied into the build environment so that step digests and the manifest name them. A
    variable that names GPU targets other than `targets` is a UsageError (exit 2)."""
    from rocmforge.errors import UsageError
    from rocmforge.knowledge.toml_files import check_keys

    check_keys(rule, where="config/build.toml [inherit]",
               optional=("prefixes", "names", "target_variables"))
    prefixes = tuple(str(p) for p in _strings(rule.get("prefixes")))
    names = set(_strings(rule.get("names")))
    wanted = {str(t) for t in targets}
    for name in _strings(rule.get("target_variables")):
        value = environ.get(name, "")
        named = {part for part in re.split(r"[;, ]+", value) if part}
        if value and named != wanted:
            raise UsageError(
                f"{name}={value!r} in your environment names other GPU targets than the build's "
                f"({';'.join(sorted(wanted))})",
                f"PyTorch's CMake would see both, and {name} can decide which code the wheel "
                "holds while the manifest names the kit's targets",
                f"unset {name}, or pass the same targets with --arch",
            )
    return {key: value for key, value in sorted(environ.items())
            if key.startswith(prefixes) or key in names}


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []
