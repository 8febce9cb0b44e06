"""The project a nox session runs in: its invoke.yaml `rocm:` keys and the work dir they name.

Owns: reading the project's Invoke file (invoke.yaml, invoke.yml or invoke.json beside the
noxfile, the folder `invoke rocm.build` also runs from) as one settings layer, and the work dir
that `invoke rocm.build` would use there (config/defaults.toml < invoke.yaml < ROCMFORGE_WORK_DIR),
so the nox sessions of a vendored kit build into and verify the same `<project>/<work dir>`.
Must not: raise while nox collects sessions (an unreadable file is no layer here: the Invoke
task that reads it reports it), or run anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from rocmforge.errors import RocmforgeError

INVOKE_FILES = ("invoke.yaml", "invoke.yml", "invoke.json")
DEFAULT_WORK_DIR = ".rocmforge"


def invoke_file_layer(project: Path) -> list[tuple[str, dict[str, object]]]:
    """The `rocm:` section of the project's Invoke file as a labelled settings layer ([] when
    there is none or it cannot be read)."""
    for name in INVOKE_FILES:
        path = project / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
            if name.endswith(".json"):
                data = json.loads(text)
            else:
                import yaml

                data = yaml.safe_load(text)
        except Exception:  # noqa: BLE001 - OSError, JSON or YAML errors: the Invoke task reports them
            return []
        section = data.get("rocm") if isinstance(data, Mapping) else None
        if isinstance(section, Mapping):
            return [(f"{path} (rocm:)", {str(k): v for k, v in section.items()})]
        return []
    return []


def project_work_dir(project: Path, environ: Mapping[str, str]) -> Path:
    """The work dir `invoke rocm.build` run in `project` uses, absolute. Never raises: settings
    that cannot be read give ROCMFORGE_WORK_DIR, else the default `.rocmforge`."""
    work_dir = ""
    try:
        from rocmforge.settings import defaults_from_config, resolve

        settings = resolve(defaults=defaults_from_config(), environ=environ,
                           invoke_layers=invoke_file_layer(project))
        work_dir = settings.work_dir
    except RocmforgeError:
        work_dir = environ.get("ROCMFORGE_WORK_DIR", "")
    path = Path(work_dir or DEFAULT_WORK_DIR).expanduser()
    return (path if path.is_absolute() else project / path).absolute()
