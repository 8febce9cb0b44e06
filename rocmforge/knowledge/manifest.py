"""dist/manifest.json: the provenance record of one build.

Owns: the manifest document (schema "rocmforge.manifest/1": targets, wheel names, lock contents,
toolchain versions, environment, per-step durations and results) and writing it atomically.
Must not: run anything or decide what a build does; the `collect` action gathers the values.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rocmforge.execute.stamps import atomic_write_text

MANIFEST_SCHEMA = "rocmforge.manifest/1"


def build_manifest(
    *,
    targets: Sequence[str],
    wheels: Mapping[str, str],
    lock: Mapping[str, Any] | str | None,
    toolchain: Mapping[str, str],
    env: Mapping[str, str],
    steps: Sequence[Mapping[str, Any]],
    plan_settings: Mapping[str, Any],
    created: str = "",
) -> dict[str, Any]:
    """The manifest document. `wheels` maps "torch"/"triton" to a file name in dist/ ("" = none)."""
    return {
        "schema": MANIFEST_SCHEMA,
        "created": created or time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "targets": list(targets),
        "wheels": {"torch": wheels.get("torch", ""), "triton": wheels.get("triton", "")},
        "lock": lock if lock is not None else {},
        "toolchain": dict(sorted(toolchain.items())),
        "env": dict(sorted(env.items())),
        "settings": dict(plan_settings),
        "steps": [dict(s) for s in steps],
    }


def write_manifest(path: Path, doc: Mapping[str, Any]) -> Path:
    """Write atomically (temp + os.replace): a full disk leaves the previous manifest or none."""
    atomic_write_text(path, json.dumps(doc, indent=2, sort_keys=False) + "\n")
    return path


def read_manifest(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or doc.get("schema") != MANIFEST_SCHEMA:
        raise ValueError(f"{path} is not a {MANIFEST_SCHEMA} document")
    return doc
