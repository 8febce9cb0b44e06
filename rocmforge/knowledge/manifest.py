"""dist/manifest.json: the provenance record of one build.

Owns: the manifest document (schema "rocmforge.manifest/1": targets, wheel names, lock contents,
toolchain versions, environment, per-step durations and results), writing it atomically, and
reading it back as a checked `Manifest` (the build's install step, `collect` and the nox verify
sessions all read it here), including the companions section (`CompanionRecord`: torchvision,
torchaudio built against the torch beside them), and the "files" section (sha256 and size of every
wheel it lists) with the check every reader makes against dist/ (`wheel_problems`). Must not: run
anything or decide what a build does; the `collect` actions gather the values."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmforge.errors import ConfigError
from rocmforge.fsutil import JSONValue, write_atomic

MANIFEST_SCHEMA = "rocmforge.manifest/1"
MANIFEST_NAME = "manifest.json"


@dataclass(frozen=True, kw_only=True)
class CompanionRecord:
    """One companion the build made (manifest "companions" section): its version (version.txt
    of the checkout), the ref and repository it was built from, the commit that ref resolved
    to, its wheel in dist/ (and that file's sha256), the torch it was built against and the
    patches applied (file, sha256)."""

    name: str
    version: str
    ref: str
    commit: str
    repo: str
    wheel: str
    sha256: str = ""
    torch: str = ""
    patches: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, kw_only=True)
class Manifest:
    """What a build left in dist/: its targets and wheels ("torch"/"triton", and
    "torchvision"/"torchaudio" when built -> a file name in dist/, "" or absent = none), and
    the whole document."""

    path: Path
    targets: tuple[str, ...]
    wheels: Mapping[str, str]
    doc: Mapping[str, JSONValue]

    @property
    def companions(self) -> Mapping[str, CompanionRecord]:
        """The companions section as records (empty when no companion was built); a
        ConfigError when it has the wrong shape."""
        raw = self.doc.get("companions", {}) or {}
        fix = "rebuild with `invoke build --with ...`"
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{self.path}: 'companions' must map names to records", "", fix)
        found: dict[str, CompanionRecord] = {}
        for name, entry in raw.items():
            if not isinstance(entry, Mapping) or not all(
                    isinstance(entry.get(k, ""), str) for k in _COMPANION_TEXT):
                raise ConfigError(f"{self.path}: companions.{name} must hold the text fields "
                                  f"{', '.join(_COMPANION_TEXT)}", "", fix)
            patches = entry.get("patches", []) or []
            if not isinstance(patches, Sequence) or not all(
                    isinstance(p, Mapping) and isinstance(p.get("file"), str)
                    and isinstance(p.get("sha256"), str) for p in patches):
                raise ConfigError(f"{self.path}: companions.{name}.patches must list "
                                  "{file, sha256} records", "", fix)
            listed: list[tuple[str, str]] = []
            for patch in patches:
                assert isinstance(patch, Mapping)  # checked above
                listed.append((str(patch["file"]), str(patch["sha256"])))
            text = {k: str(entry.get(k, "") or "") for k in _COMPANION_TEXT}
            found[str(name)] = CompanionRecord(name=str(name), **text, patches=tuple(listed))
        return found


_COMPANION_TEXT = ("version", "ref", "commit", "repo", "wheel", "sha256", "torch")


def build_manifest(
    *,
    targets: Sequence[str],
    wheels: Mapping[str, str],
    lock: Mapping[str, object] | str | None,
    toolchain: Mapping[str, str],
    env: Mapping[str, str],
    steps: Sequence[Mapping[str, object]],
    plan_settings: Mapping[str, object],
    created: str = "",
) -> dict[str, object]:
    """The manifest document (values JSON-able; the caller adds its sections). `wheels` maps
    "torch"/"triton" to a file name in dist/ ("" = none); the companions' wheels and their
    "companions" section are added by the companions-collect step (steps.companions)."""
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
        "files": {},
    }


def write_manifest(path: Path, doc: Mapping[str, object]) -> Path:
    """Write atomically (temp + os.replace): a full disk leaves the previous manifest or none."""
    write_atomic(path, json.dumps(doc, indent=2, sort_keys=False) + "\n")
    return path


def read_manifest(path: Path) -> Manifest:
    """The manifest at `path`; a ConfigError (what, why, fix) when it is missing, unreadable,
    of another schema, or its targets or wheels have the wrong shape."""
    fix = "rebuild with `invoke build`, or delete it and point ROCMFORGE_VERIFY_TARGETS at config"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path} is not readable JSON ({exc})", "", fix) from None
    if not isinstance(data, dict) or data.get("schema") != MANIFEST_SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise ConfigError(f"{path} has schema {found!r}, expected {MANIFEST_SCHEMA!r}",
                          "It was written by another version of the kit or another tool", fix)
    targets = data.get("targets")
    if not isinstance(targets, list) or not all(isinstance(t, str) and t for t in targets):
        raise ConfigError(f"{path}: 'targets' must be a list of target names", "", fix)
    wheels = data.get("wheels", {})
    if not isinstance(wheels, dict) or not all(isinstance(v, str) for v in wheels.values()):
        raise ConfigError(f"{path}: 'wheels' must map names to wheel file names", "", fix)
    return Manifest(path=path, targets=tuple(targets), wheels=dict(wheels), doc=data)


def file_record(path: Path) -> dict[str, object]:
    """{"sha256", "size"} of a wheel, for the manifest's "files" section."""
    import hashlib

    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"sha256": digest.hexdigest(), "size": path.stat().st_size}


def listed_wheels(manifest: Manifest) -> list[str]:
    """Every wheel file name the manifest lists: torch, triton, then the companions."""
    names = [manifest.wheels[k] for k in ("triton", "torch") if manifest.wheels.get(k)]
    names += [v for k, v in manifest.wheels.items() if v and k not in ("triton", "torch")]
    with contextlib.suppress(ConfigError):  # a malformed section lists no companion wheel
        names += [r.wheel for r in manifest.companions.values() if r.wheel]
    return list(dict.fromkeys(names))


def wheel_problems(manifest: Manifest, *, deep: bool, unlisted: bool = True) -> list[str]:
    """Where dist/ and the manifest disagree, one sentence each ([] = they agree): a wheel
    named with a path (only plain file names in dist/ are the build's), one that is gone or is
    not a regular file, one without a record in "files", or whose size (and with `deep`, its
    sha256) is not the recorded one; a companion entry whose sha256 is not its "files" record;
    a wheel in dist/ the manifest does not list. The one check of the one record that `invoke
    install`, `nox -s verify` and the build's up-to-date test all make. Cheap without `deep` (a
    stat per wheel); `deep` reads every wheel (install and verify do, before putting them into
    a venv). `unlisted=False` leaves the unlisted wheels out (the build's up-to-date test: a
    stray wheel makes only the collect steps run again, not the builds)."""
    dist = manifest.path.parent
    files = manifest.doc.get("files", {})
    files = files if isinstance(files, Mapping) else {}
    problems = []
    for name in listed_wheels(manifest):
        if Path(name).name != name or name.startswith(".") or not name.endswith(".whl"):
            problems.append(f"{manifest.path} names {name!r}, which is not a wheel file in "
                            f"{dist}")
            continue
        path = dist / name
        if path.is_symlink() or not path.is_file():
            problems.append(f"{path} (listed in {manifest.path.name}) is gone" if not
                            path.is_symlink() else f"{path} is a link, not the build's file")
            continue
        record = files.get(name)
        if not isinstance(record, Mapping) or not isinstance(record.get("sha256"), str):
            problems.append(f"{manifest.path.name} records no sha256 for {name}")
            continue
        if record.get("size") != path.stat().st_size:
            problems.append(f"{path} is not the file {manifest.path.name} records (size "
                            f"{path.stat().st_size}, recorded {record.get('size')})")
            continue
        if deep and file_record(path)["sha256"] != record["sha256"]:
            problems.append(f"{path} is not the file {manifest.path.name} records (sha256 "
                            "differs)")
    return problems + _second_records(manifest, files) + (_unlisted(manifest) if unlisted else [])


def _second_records(manifest: Manifest, files: Mapping[str, object]) -> list[str]:
    """A companion entry's own sha256 that is not the "files" record of its wheel: the one
    record ("files") is what every reader checks, and a manifest that says two things about one
    wheel is refused rather than believed either way."""
    problems = []
    with contextlib.suppress(ConfigError):  # a malformed section lists no companion wheel
        for name, record in manifest.companions.items():
            kept = files.get(record.wheel)
            if record.sha256 and isinstance(kept, Mapping) and \
                    kept.get("sha256") != record.sha256.lower():
                problems.append(f"{manifest.path.name} records two sha256 for {record.wheel} "
                                f"(companions.{name} and files)")
    return problems


def _unlisted(manifest: Manifest) -> list[str]:
    """A wheel in dist/ that the manifest does not list (a collect killed between its copy and
    its manifest, or a wheel put there by hand): `pip install dist/*.whl` would take it, and
    `invoke install` would leave it out, so every reader refuses the pair."""
    return [f"{path} is in dist/ but {manifest.path.name} does not list it"
            for path in unlisted_wheels(manifest)]


def unlisted_wheels(manifest: Manifest) -> list[Path]:
    """The *.whl files in the manifest's dist/ that it does not list, sorted."""
    listed = set(listed_wheels(manifest))
    return [path for path in sorted(manifest.path.parent.glob("*.whl"))
            if path.name not in listed]


def refuse_disagreeing_dist(manifest: Manifest) -> None:
    """Stop (exit 2, nothing installed) when dist/ holds other wheels than the manifest
    records: a wheel gone, replaced by another build under the same name, or named outside
    dist/. Reads every wheel's sha256."""
    from rocmforge.errors import UsageError

    problems = wheel_problems(manifest, deep=True)
    if problems:
        raise UsageError(
            "dist/ and its manifest disagree: " + "; ".join(problems),
            "only the wheels a finished build recorded (by name, size and sha256) are installed, "
            "so a swapped, missing or foreign wheel never reaches a venv; nothing was installed",
            "run `invoke build` again: its collect steps copy the build's wheels again and "
            "remove every wheel the manifest does not list",
        )


def manifest_in(dist: Path) -> Manifest | None:
    """The manifest of the build in `dist`, None when there is none; ConfigError when it
    cannot be used."""
    path = dist / MANIFEST_NAME
    return read_manifest(path) if path.is_file() else None
