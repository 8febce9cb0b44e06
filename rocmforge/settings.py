"""Settings: one frozen record resolved from four sources.

Owns: the precedence `config/defaults.toml` < invoke.yaml `rocm:` < `ROCMFORGE_*` environment
variables < task flags, and the type checking of every value on the way. Must not: probe the
machine or touch the disk beyond reading config/defaults.toml.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocmforge.errors import UsageError
from rocmforge.knowledge.toml_files import config_dir, read_toml, suggest

ENV_PREFIX = "ROCMFORGE_"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Everything a task needs to know about what the user asked for."""

    arch: str = ""
    rocm_path: str = ""
    work_dir: str = ".rocmforge"
    pytorch_repo: str = ""
    pytorch_ref: str = ""
    pin_url: str = ""
    mirrors: Mapping[str, str] = field(default_factory=dict)
    triton_repo: str = ""
    triton_index: str = ""
    triton_mode: str = "auto"
    allow_triton_gap: bool = False
    gcc: int = 0
    clang: int = 0
    allow_compiler: bool = False
    max_jobs: int = 0
    mem_per_job_gib: float = 4.5
    cache: str = "auto"
    python: str = ""
    build_env: Mapping[str, str] = field(default_factory=dict)
    features: Mapping[str, str] = field(default_factory=dict)
    skip_preflight: bool = False
    venv_system_site_packages: bool = False
    alternatives_altdir: str = ""
    alternatives_admindir: str = ""
    alternatives_link_dir: str = ""
    # Where each value came from, for `invoke plan` and error messages: name -> source label.
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def work_path(self) -> Path:
        return Path(self.work_dir)

    def as_dict(self) -> dict[str, Any]:
        out = {
            f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "origins"
        }
        out["mirrors"] = dict(self.mirrors)
        out["build_env"] = dict(self.build_env)
        out["features"] = dict(self.features)
        return out


SETTING_NAMES = tuple(f.name for f in dataclasses.fields(Settings) if f.name != "origins")
_CACHE_CHOICES = ("auto", "ccache", "sccache", "none")
_TRITON_CHOICES = ("auto", "wheel", "source", "skip")
# ROCMFORGE_* variables that are not settings: read by knowledge.toml_files (CONFIG_DIR), by the
# nox sessions (VERIFY_TARGETS, DIST) before any Settings exist, and by probes.tool_cache
# (CACHE_DIR).
_NOT_SETTINGS = ("config_dir", "verify_targets", "dist", "cache_dir")


def defaults_from_config(directory: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The lowest layer: config/defaults.toml, checked against the known setting names."""
    path = config_dir(directory) / "defaults.toml"
    data = read_toml(path)
    _check_names(data, source=str(path))
    return data


def resolve(
    *,
    defaults: Mapping[str, Any],
    invoke_config: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
) -> Settings:
    """Merge the four layers (later wins) into a checked Settings.

    `invoke_config` is the `rocm:` section as Invoke merged it (collection defaults plus
    invoke.yaml). Flags whose value is None, "" or 0 are "not given" and do not override, because
    Invoke derives a flag's type from its default and cannot express "unset" otherwise.
    """
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}

    def layer(items: Mapping[str, Any], label: str, *, skip_empty: bool = False) -> None:
        _check_names(items, source=label)
        for key, value in items.items():
            if skip_empty and value in (None, "", 0, False, {}):
                continue
            values[key] = _coerce(key, value, source=label)
            origins[key] = label

    layer(defaults, "config/defaults.toml")
    if invoke_config:
        layer({k: v for k, v in invoke_config.items()}, "invoke.yaml (rocm:)")
    for key, value in sorted(_env_layer(environ if environ is not None else os.environ).items()):
        values[key] = _coerce(key, value, source=ENV_PREFIX + key.upper())
        origins[key] = "env " + ENV_PREFIX + key.upper()
    if flags:
        layer(flags, "flag", skip_empty=True)
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


def _check_names(items: Mapping[str, Any], *, source: str) -> None:
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
        text = str(value).strip() if value is not None else ""
        if key == "cache" and text not in _CACHE_CHOICES:
            raise ValueError
        if key == "triton_mode" and text not in _TRITON_CHOICES:
            raise ValueError
        return text
    except (TypeError, ValueError):
        kind = _kind_name(default, key)
        raise UsageError(
            f"Setting {key} from {source} has the value {value!r}, which is not {kind}",
            "the kit checks every setting before it plans anything",
            f"give {key} {kind}",
        ) from None


def _kind_name(default: Any, key: str) -> str:
    if key == "cache":
        return "one of " + ", ".join(_CACHE_CHOICES)
    if key == "triton_mode":
        return "one of " + ", ".join(_TRITON_CHOICES)
    if isinstance(default, bool):
        return "a boolean (true/false, 1/0, yes/no)"
    if isinstance(default, int):
        return "a whole number >= 0"
    if isinstance(default, float):
        return "a number > 0"
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
