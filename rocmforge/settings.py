"""Settings: one frozen record resolved from four sources, and the one table of task flags.

Owns: the precedence `config/defaults.toml` < invoke.yaml `rocm:` < `ROCMFORGE_*` environment
variables < task flags, the type checking of every value on the way, where each value came from,
and FLAGS: every flag of every task (long name, short letter, help, the setting it sets). The
GPU targets (`arch`) are checked here, once, by knowledge.targets.parse_targets against the arch
table (`TargetRequest`).
Must not: probe the machine, touch the disk beyond reading config/defaults.toml and the arch
table (config/arches.toml, aliases.toml), or import Invoke (rocmforge.tasks._flags turns FLAGS
into Invoke arguments).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin, get_type_hints

from rocmforge.errors import UsageError
from rocmforge.knowledge.cache_backends import CacheMode
from rocmforge.knowledge.targets import TargetId
from rocmforge.knowledge.toml_files import config_dir, read_toml, suggest
from rocmforge.knowledge.triton import TritonMode

if TYPE_CHECKING:
    from rocmforge.fsutil import JSONDoc

ENV_PREFIX = "ROCMFORGE_"


class TargetRequest(str):
    """The `arch` setting: the GPU targets as the user wrote them (aliases, separators and all,
    which is how the kit's messages and commands repeat them), and `targets`, what
    knowledge.targets.parse_targets made of them when the setting was resolved ("" and () = the
    GPUs found). A target the arch table does not know is a TargetError there, exit 2, before
    anything reads the setting."""

    targets: tuple[TargetId, ...]

    def __new__(cls, text: str = "", targets: tuple[TargetId, ...] = ()) -> TargetRequest:
        made = super().__new__(cls, text)
        made.targets = targets
        return made

    @classmethod
    def parse(cls, text: str) -> TargetRequest:
        """`text` checked against the kit's arch table (the one parser of target strings)."""
        if not text.strip():
            return cls("")
        from rocmforge.knowledge.arches import load_arch_table
        from rocmforge.knowledge.targets import parse_targets

        return cls(text, parse_targets(text, load_arch_table()))


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Everything a task needs to know about what the user asked for."""

    arch: TargetRequest = TargetRequest()
    rocm_path: str = ""
    work_dir: str = ".rocmforge"
    pytorch_repo: str = ""
    pytorch_ref: str = ""
    pin_url: str = ""
    lock_file: str = ""
    mirrors: Mapping[str, str] = field(default_factory=dict)
    triton_repo: str = ""
    triton_index: str = ""
    triton_mode: TritonMode = "auto"
    allow_triton_gap: bool = False
    patches_dir: str = ""
    gcc: int = 0
    clang: int = 0
    allow_compiler: bool = False
    max_jobs: int = 0
    mem_per_job_gib: float = 4.5
    cache: CacheMode = "auto"
    cache_remote: str = ""
    python: str = ""
    build_env: Mapping[str, str] = field(default_factory=dict)
    # CMAKE_POLICY_VERSION_MINIMUM for the build ("" = not set): CMake 4 refuses projects that
    # declare a minimum below 3.5, which submodules of older PyTorch releases still do.
    cmake_policy_minimum: str = "3.5"
    # A pip ROCm SDK (TheRock's `rocm` packages) as the build's ROCm: the SDK version pinned
    # (alone: today's multi-arch index) and the package index URL ("" = the default of the
    # version's route; "{family}" becomes the targets' family, config/rocm_sdk.toml).
    rocm_sdk: str = ""
    rocm_sdk_version: str = ""
    features: Mapping[str, str] = field(default_factory=dict)
    # Companions built against the new torch (config/companions.toml): "torchvision",
    # "torchaudio@v2.11.0" (a ref of your own after '@'); companion_repos: name -> git URL.
    companions: tuple[str, ...] = ()
    companion_repos: Mapping[str, str] = field(default_factory=dict)
    skip_preflight: bool = False
    venv_system_site_packages: bool = False
    alternatives_altdir: str = ""
    alternatives_admindir: str = ""
    alternatives_link_dir: str = ""
    matrix_refs: str = ""
    matrix_groups: Mapping[str, str] = field(default_factory=dict)
    # Where each value came from, for `invoke plan` and error messages: name -> source label.
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def work_path(self) -> Path:
        return Path(self.work_dir)

    def as_dict(self) -> JSONDoc:
        out = {
            f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "origins"
        }
        out["mirrors"] = dict(self.mirrors)
        out["build_env"] = dict(self.build_env)
        out["matrix_groups"] = dict(self.matrix_groups)
        out["features"] = dict(self.features)
        out["companions"] = list(self.companions)
        out["companion_repos"] = dict(self.companion_repos)
        return out


SETTING_NAMES = tuple(f.name for f in dataclasses.fields(Settings) if f.name != "origins")
# The settings typed with a Literal (cache, triton_mode): the values each accepts, in order.
_CHOICES: Mapping[str, tuple[str, ...]] = {
    name: get_args(hint) for name, hint in get_type_hints(Settings).items()
    if get_origin(hint) is Literal
}
# ROCMFORGE_* variables that are not settings: read by knowledge.toml_files (CONFIG_DIR), by the
# nox sessions (VERIFY_TARGETS, DIST) before any Settings exist, and by probes.tool_cache
# (CACHE_DIR), probes.probe_store (PROBE_CACHE), probes (PROBE_TIMEOUT_S) and errors
# (TASK_PREFIX: how messages name the kit's tasks).
_NOT_SETTINGS = ("config_dir", "verify_targets", "dist", "cache_dir", "probe_cache",
                 "probe_timeout_s", "task_prefix")


def defaults_from_config(directory: str | os.PathLike[str] | None = None) -> dict[str, object]:
    """The lowest layer: config/defaults.toml, checked against the known setting names."""
    path = config_dir(directory) / "defaults.toml"
    data = read_toml(path)
    _check_names(data, source=str(path))
    return data


# One Invoke configuration layer that holds `rocm:` keys: (where it came from, its values).
ConfigLayer = tuple[str, Mapping[str, object]]
DEFAULTS_SOURCE = "config/defaults.toml"
BUILT_IN = "default"  # a value no layer gave: the Settings field's own default


def resolve(
    *,
    defaults: Mapping[str, object],
    invoke_config: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, object] | None = None,
    invoke_layers: Sequence[ConfigLayer] = (),
    defaults_source: str = DEFAULTS_SOURCE,
) -> Settings:
    """Merge the layers (later wins) into a checked Settings that records each value's source.

    Order: the Settings defaults < `defaults` (config/defaults.toml) < `invoke_layers` (each
    labelled with the file or variable it came from, lowest first) < `invoke_config` (labelled
    invoke.yaml) < ROCMFORGE_* < flags (by setting name). Flags whose value is None, "" or 0 are
    "not given" and do not override, because Invoke derives a flag's type from its default and
    cannot express "unset" otherwise.
    """
    values: dict[str, Any] = {}
    origins: dict[str, str] = {name: BUILT_IN for name in SETTING_NAMES}

    def layer(items: Mapping[str, object], label: str, *, skip_empty: bool = False) -> None:
        _check_names(items, source=label)
        for key, value in items.items():
            if skip_empty and value in (None, "", 0, False, {}):
                continue
            values[key] = _coerce(key, value, source=label)
            origins[key] = label

    layer(defaults, defaults_source)
    for label, items in invoke_layers:
        layer(items, label)
    if invoke_config:
        layer({k: v for k, v in invoke_config.items()}, "invoke.yaml (rocm:)")
    for key, value in sorted(_env_layer(environ if environ is not None else os.environ).items()):
        values[key] = _coerce(key, value, source=ENV_PREFIX + key.upper())
        origins[key] = "env " + ENV_PREFIX + key.upper()
    for key, given in (flags or {}).items():
        flag = FLAG_OF_SETTING.get(key)
        layer({key: given}, f"flag {flag.long}" if flag else "flag", skip_empty=True)
    return Settings(**values, origins=origins)


def _env_layer(environ: Mapping[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX):
            continue
        key = name[len(ENV_PREFIX) :].lower()
        if key in _NOT_SETTINGS:
            continue
        if key not in SETTING_NAMES:
            env_names = [ENV_PREFIX + n.upper() for n in SETTING_NAMES]
            hint = suggest(name, env_names)
            raise UsageError(
                f"Environment variable {name} is not a rocmforge setting.{hint}",
                "a misspelled variable would otherwise be ignored and the default used silently",
                f"unset {name}, or use one of {', '.join(env_names)}",
            )
        found[key] = value
    return found


def _check_names(items: Mapping[str, object], *, source: str) -> None:
    for key in items:
        if key not in SETTING_NAMES:
            raise UsageError(
                f'Unknown setting "{key}" in {source}.{suggest(key, SETTING_NAMES)}',
                "a misspelled setting would otherwise be ignored and its default used silently",
                f"rename it to one of: {', '.join(SETTING_NAMES)}",
            )


def _coerce(key: str, value: Any, *, source: str) -> Any:
    """Convert a raw value (TOML, YAML, env string or flag) to the setting's type."""
    default = getattr(Settings(), key)
    try:
        if isinstance(default, bool):
            return _to_bool(value)
        if isinstance(default, int):
            if isinstance(value, bool):
                raise ValueError
            number = int(value)
            if number < 0:
                raise ValueError
            return number
        if isinstance(default, float):
            real = float(value)
            if real <= 0:
                raise ValueError
            return real
        if isinstance(default, Mapping):
            return _to_mapping(value)
        if isinstance(default, tuple):
            return _to_words(value)
        text = str(value).strip() if value is not None else ""
        if key == "arch":
            return TargetRequest.parse(text)
        if key in _CHOICES and text not in _CHOICES[key]:
            raise ValueError
        if key == "cache_remote" and text:
            from rocmforge.knowledge.cache_backends import parse_remote

            parse_remote(text, source=source)
        return text
    except (TypeError, ValueError):
        kind = _kind_name(default, key)
        raise UsageError(
            f"Setting {key} from {source} has the value {value!r}, which is not {kind}",
            "the kit checks every setting before it plans anything",
            f"give {key} {kind}",
        ) from None


def _kind_name(default: Any, key: str) -> str:
    if key in _CHOICES:
        return "one of " + ", ".join(_CHOICES[key])
    if isinstance(default, bool):
        return "a boolean (true/false, 1/0, yes/no)"
    if isinstance(default, int):
        return "a whole number >= 0"
    if isinstance(default, float):
        return "a number > 0"
    if isinstance(default, tuple):
        return "a list of names (a TOML/YAML list, or words separated by ',' or ';')"
    if isinstance(default, Mapping):
        return "a mapping (TOML/YAML table, or KEY=VALUE pairs separated by ';' in the environment)"
    return "a string"


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(text)


def _to_words(value: Any) -> tuple[str, ...]:
    """A list setting from a TOML/YAML list or a "a,b;c" string (flag, environment)."""
    if isinstance(value, str):
        items: list[Any] = value.replace(";", ",").split(",")
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        raise TypeError(type(value).__name__)
    if not all(isinstance(item, str) for item in items):
        raise TypeError("not text")
    return tuple(word.strip() for item in items for word in item.split(",") if word.strip())


def _to_mapping(value: Any) -> dict[str, str]:
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, str):
        out: dict[str, str] = {}
        for part in value.split(";"):
            part = part.strip()
            if not part:
                continue
            name, sep, val = part.partition("=")
            if not sep or not name.strip():
                raise ValueError(part)
            out[name.strip()] = val.strip()
        return out
    raise TypeError(type(value).__name__)


# --- the flags of every task ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Flag:
    """One command-line flag, spelt the same in every task that takes it.

    `name` is the Python parameter (the long flag is `--name` with '-' for '_'); `short` is its
    one letter ("" = none), and a letter means one flag in every task. A flag with a `setting`
    sets that Settings field (its value overrides config/, invoke.yaml and ROCMFORGE_*); one
    without is an option of the tasks that take it.
    """

    name: str
    short: str
    help: str
    setting: str = ""

    @property
    def long(self) -> str:
        return "--" + self.name.strip("_").replace("_", "-")


FLAGS: tuple[Flag, ...] = (
    # Flags that set a setting (plan, build and the tasks that read the same setting).
    Flag(name="arch", short="a", setting="arch",
         help="GPU targets, ';' or ',' separated, aliases allowed (gfx1100, \"gfx90a;gfx942\", "
         "mi300, rdna3); default: the GPUs found"),
    Flag(name="ref", short="r", setting="pytorch_ref",
         help="PyTorch tag, branch or 40-hex commit (setting pytorch_ref, e.g. v2.9.1)"),
    Flag(name="repo", short="u", setting="pytorch_repo",
         help="PyTorch git URL, mirror or path (setting pytorch_repo)"),
    Flag(name="rocm_path", short="o", setting="rocm_path",
         help="ROCm install (default: ROCM_PATH, HIP_PATH, /opt/rocm*, /usr)"),
    Flag(name="rocm_sdk", short="", setting="rocm_sdk",
         help="the pip ROCm SDK index URL (default: TheRock's multi-arch index; with {family}: "
         "an older release's per-family index) (setting rocm_sdk)"),
    Flag(name="rocm_sdk_version", short="", setting="rocm_sdk_version",
         help="build against TheRock's pip ROCm SDK of this release, installed into the build "
         "venv with a device-<target> extra per target (e.g. 10.1.0a20260811)"),
    Flag(name="work_dir", short="w", setting="work_dir",
         help="the kit's work dir: sources, venv, logs, dist (default .rocmforge)"),
    Flag(name="gcc", short="g", setting="gcc", help="host GCC major for CC/CXX (e.g. 11)"),
    Flag(name="clang", short="c", setting="clang", help="host Clang major for CC/CXX (e.g. 16)"),
    Flag(name="allow_compiler", short="l", setting="allow_compiler",
         help="accept a host compiler outside the version table for the ROCm found"),
    Flag(name="allow_triton_gap", short="x", setting="allow_triton_gap",
         help="build even when the pinned Triton cannot compile for a target (setting "
         "allow_triton_gap; recorded in the manifest)"),
    Flag(name="python", short="p", setting="python",
         help="interpreter that creates the build venv"),
    Flag(name="triton", short="t", setting="triton_mode",
         help="auto (prebuilt wheel, else source), wheel, source, or skip (setting triton_mode)"),
    Flag(name="skip_preflight", short="s", setting="skip_preflight",
         help="do not stop on doctor's FAIL rows (setting skip_preflight)"),
    Flag(name="system_site_packages", short="y", setting="venv_system_site_packages",
         help="let the build venv see the interpreter's site-packages (setting "
         "venv_system_site_packages)"),
    # `with` is a Python keyword: the parameter is with_, the flag --with (Invoke strips the _).
    Flag(name="with_", short="", setting="companions",
         help="companions and extensions to build against the new torch, e.g. "
         "torchvision,flash-attention,bitsandbytes; name@ref builds a ref of your own "
         "(torchvision@v0.28.0); git+URL@ref or a folder builds any extension; setting "
         "companions"),
    # Options of the tasks that take them.
    Flag(name="json", short="j", help="print a versioned JSON document instead of a table"),
    Flag(name="no_cache", short="",
         help="run every probe afresh: no test-compile result from an earlier run (also "
         "ROCMFORGE_PROBE_CACHE=0)"),
    Flag(name="expect", short="e",
         help='targets every library with device code must carry, e.g. "gfx1100;gfx942"'),
    Flag(name="format", short="f", help="sh (default), fish, json, or github ($GITHUB_ENV lines)"),
    Flag(name="lock", short="k", setting="lock_file",
         help="reproduce the tree a rocmforge.lock file describes (its commits win over --ref; "
         "setting lock_file)"),
    Flag(name="device", short="d",
         help="cuda (ROCm and CUDA builds), cpu, or auto (cuda when a GPU is visible)"),
    Flag(name="verbose", short="v",
         help="also show every step's full output on the console (it always goes to "
         "<work>/logs/<step>.log)"),
    Flag(name="into", short="i", help="the other repository's root folder"),
    Flag(name="all", short="",
         help="remove the whole work dir the kit made (sources, venv, dist, logs, stamps)"),
    Flag(name="logs", short="",
         help="also remove logs/ (kept by default: a failed step's log is what you need next)"),
    Flag(name="check", short="",
         help="only report each patch's state (applies/applied/absorbed/stale); change nothing"),
    Flag(name="revert", short="", help="reverse the patches this kit applied, last first"),
    Flag(name="timeout", short="", help="seconds to wait for each HTTP reply (default 10)"),
    Flag(name="system", short="",
         help="also switch the system-wide gcc/clang with update-alternatives (needs root)"),
    Flag(name="restore", short="",
         help="put the update-alternatives groups back as they were before --system"),
    Flag(name="paths", short="",
         help="wheel, directory or ELF file (required, first argument); several: quote them as "
         "one argument ('dist/torch.whl build/lib'); shell-style globs are expanded"),
    Flag(name="path", short="",
         help="one more wheel, directory or ELF file; repeat for several "
         "(--path a.whl --path build/lib)"),
    Flag(name="log", short="",
         help="the log to explain: a file (a failed step's log, a CI log, pip or docker "
         "output) or - for stdin"),
    Flag(name="step", short="",
         help="the kit step the log comes from (configure, build, verify, …): narrows triage "
         "to the rules for it"),
    Flag(name="deep", short="",
         help="decompress every compressed bundle whole, check its header hash, and cross-check "
         "every code object (slower; the default reads entry tables only)"),
    Flag(name="only", short="",
         help="comma-separated checks (verify names them: rocmforge.verify.model.CHECK_NAMES)"),
    Flag(name="comm_sizes", short="", help="message sizes for comm, e.g. 1KiB,1MiB,1GiB"),
    Flag(name="comm_timeout", short="",
         help="seconds without progress before comm is declared hung"),
    Flag(name="tree", short="",
         help="a PyTorch checkout to read (required), e.g. .rocmforge/src/pytorch"),
    Flag(name="prefix", short="",
         help="folder inside it that receives the kit (default third_party/rocmforge)"),
    Flag(name="update", short="",
         help="refresh an earlier copy: show the diff, keep files edited there"),
    Flag(name="rocm", short="",
         help="ROCm release the build uses, e.g. 7.0 (default: the selected ROCm install's)"),
    Flag(name="hip", short="",
         help="its HIP release, e.g. 7.15 for ROCm 10.0 (default: the install's hip_version.h, "
         "else config/rocm.toml)"),
    Flag(name="base_url", short="",
         help="mirror of https://github.com/ROCm/aotriton/releases/download/ (same layout)"),
    Flag(name="group", short="",
         help="a target group NAME=TARGETS, e.g. mi300=gfx942 or 'rdna3=gfx1100,gfx1101' "
         "(repeatable; default: setting matrix_groups, else one group of --arch)"),
    Flag(name="workflow", short="",
         help="print a GitHub Actions workflow instead of the strategy.matrix JSON"),
)
FLAG_BY_NAME: Mapping[str, Flag] = {f.name: f for f in FLAGS}
FLAG_OF_SETTING: Mapping[str, Flag] = {f.setting: f for f in FLAGS if f.setting}
# The flags of `invoke plan` and `invoke build`, in help order.
BUILD_FLAGS: tuple[str, ...] = ("arch", "ref", "repo", "rocm_path", "work_dir", "gcc", "clang",
                                "allow_compiler", "allow_triton_gap", "python", "triton",
                                "skip_preflight", "system_site_packages", "lock", "with_",
                                "rocm_sdk", "rocm_sdk_version")


def flag_default(flag: Flag) -> str | bool:
    """What a setting flag holds when it is not given: False for a boolean setting, else ""
    (Invoke takes the flag's type from it; text is checked by `resolve`, so `--gcc abc` is a
    one-paragraph error instead of a traceback in Invoke's parser)."""
    return False if isinstance(getattr(Settings(), flag.setting), bool) else ""


def settings_of_flags(given: Mapping[str, object]) -> dict[str, object]:
    """Task flag values (by flag name) under their setting names; task options are left out."""
    return {FLAG_BY_NAME[name].setting: value for name, value in given.items()
            if FLAG_BY_NAME[name].setting}
