"""Decisions behind `nox -s verify(<target>)`, kept out of the noxfile so they can be tested.

Owns: choosing the session targets (the manifest, or config/ when ROCMFORGE_VERIFY_TARGETS asks),
finding exactly one torch and one Triton wheel for this Python (none when the build skipped
Triton: the manifest says so, and the `triton` check is left out with that reason), the
companion and extension wheels the manifest lists (the one record `invoke install` reads too:
every listed wheel sha256-checked, and no other wheel in dist/), and the verify command line.
Bad input raises a RocmforgeError; `bail()` turns it into one paragraph on stderr and exit 2, so
nox prints no traceback.
Must not: create venvs or run anything (the noxfile does), or raise while nox collects sessions
(`session_targets` never raises: a problem becomes a session that reports it when run).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rocmforge.errors import RocmforgeError, TargetError, UsageError
from rocmforge.knowledge.manifest import (
    MANIFEST_NAME,
    Manifest,
    listed_wheels,
    manifest_in,
    refuse_disagreeing_dist,
)
from rocmforge.knowledge.triton import wheel_provider

# Where the wheels are; default <kit root>/<work dir>/dist (the build's dist/).
DIST_ENV = "ROCMFORGE_DIST"
# "config": targets from the kit's settings (config/defaults.toml < ROCMFORGE_ARCH); or an
# explicit list "gfx1100;gfx942". Unset: the manifest's targets.
TARGETS_ENV = "ROCMFORGE_VERIFY_TARGETS"
# Session ids for "nothing to verify" and "the manifest is unreadable": listed so `nox -l`
# shows them, and failing with the reason when run.
NO_TARGETS = "no-manifest"
BAD_MANIFEST = "bad-manifest"
_SEPARATORS = re.compile(r"[;,\s]+")


@dataclass(frozen=True, kw_only=True)
class WheelSet:
    torch: Path
    triton: Path | None  # None: the build skipped Triton (`--triton skip`)
    companions: tuple[Path, ...] = ()  # torchvision/torchaudio wheels the manifest names

    @property
    def triton_version(self) -> str:
        return wheel_version(self.triton) if self.triton is not None else ""

    @property
    def paths(self) -> tuple[Path, ...]:
        base = (self.torch,) if self.triton is None else (self.torch, self.triton)
        return base + self.companions


@dataclass(frozen=True, kw_only=True)
class VerifySession:
    """Everything one `verify(<target>)` session needs, decided before it touches anything."""

    target: str
    wheels: WheelSet
    report: Path
    manifest: Path | None = None

    def verify_argv(self, python: str = "python") -> list[str]:
        if self.wheels.triton is None:
            from rocmforge.verify.model import CHECK_NAMES

            which = ["--only", ",".join(n for n in CHECK_NAMES
                                        if n not in ("triton", "triton_targets"))]
        else:
            which = ["--triton-pin", self.wheels.triton_version]
        return [
            python, "-m", "rocmforge.verify",
            "--expect", self.target,
            "--when-device", self.target,
            *which,
            "--json", str(self.report),
            *(("--manifest", str(self.manifest)) if self.manifest else ()),
        ]

    def notes(self) -> tuple[str, ...]:
        """What the session says before it runs: what it cannot verify, and why."""
        if self.wheels.triton is None:
            return ("Triton was skipped by the build (its manifest names no Triton wheel, "
                    "`--triton skip`): the `triton` and `triton_targets` checks are not run, "
                    "so torch.compile on the GPU is not verified; rebuild with `--triton auto` "
                    "to verify it",)
        return ()


def dist_dir(project: Path, environ: Mapping[str, str]) -> Path:
    """ROCMFORGE_DIST when set; else `<work dir>/dist`, where `invoke build` (or
    `invoke rocm.build` in a repo that vendored the kit) writes when run in `project` (the
    noxfile's folder): the work dir from config/defaults.toml < the project's invoke.yaml
    `rocm:` < ROCMFORGE_WORK_DIR, relative to `project` (rocmforge.sessions.project). Never
    raises: nox may be collecting sessions."""
    from rocmforge.sessions.project import project_work_dir

    value = environ.get(DIST_ENV, "")
    if value:
        return Path(value)
    return project_work_dir(project, environ) / "dist"


def split_targets(text: str) -> tuple[str, ...]:
    seen: list[str] = []
    for token in _SEPARATORS.split(text.strip()):
        if token and token not in seen:
            seen.append(token)
    return tuple(seen)


def session_targets(dist: Path, environ: Mapping[str, str],
                    config_targets: Callable[[], tuple[str, ...]]) -> list[str]:
    """Targets to parametrize `verify` with. Never raises (nox is collecting sessions)."""
    requested = environ.get(TARGETS_ENV, "").strip()
    if requested:
        if requested == "config":
            try:
                found = config_targets()
            except RocmforgeError:
                return [BAD_MANIFEST]
            return list(found) or [NO_TARGETS]
        return list(split_targets(requested))
    try:
        manifest = manifest_in(dist)
    except RocmforgeError:
        return [BAD_MANIFEST]
    if manifest is None or not manifest.targets:
        return [NO_TARGETS]
    return list(manifest.targets)


def config_targets(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The `arch` setting (config/defaults.toml < ROCMFORGE_ARCH), split."""
    from rocmforge.settings import defaults_from_config, resolve

    settings = resolve(defaults=defaults_from_config(), environ=environ)
    return split_targets(settings.arch)


def wheel_version(wheel: Path) -> str:
    return wheel.name.split("-")[1]


def wheel_dist(wheel: Path) -> str:
    return wheel.name.split("-")[0].lower()


def find_wheels(dist: Path, manifest: Manifest | None) -> WheelSet:
    """Exactly one torch wheel and one Triton wheel: the manifest's, else the only ones in dist/."""
    if manifest is not None and manifest.wheels.get("torch"):
        named = {k: dist / v for k, v in manifest.wheels.items() if v}
        missing = [f"{k}: {p.name}" for k, p in named.items() if k in ("torch", "triton")
                   and not p.is_file()]
        if missing:
            raise UsageError(f"{manifest.path} names wheels that are not in {dist}: "
                             f"{', '.join(missing)}", "They were moved or deleted after the build",
                             "run `invoke build` again, or copy the wheels back")
        # The one record `invoke install` and the build's up-to-date test read too: every wheel
        # it lists is in dist/ with its recorded sha256, and dist/ holds no other wheel.
        refuse_disagreeing_dist(manifest)
        # An empty (or absent) Triton entry: the build skipped Triton; verify what was built.
        return WheelSet(torch=named["torch"], triton=named.get("triton"),
                        companions=companion_wheels(dist, manifest))
    wheels = sorted(dist.glob("*.whl")) if dist.is_dir() else []
    torches = [w for w in wheels if wheel_dist(w) == "torch"]
    tritons = [w for w in wheels if wheel_provider(w.name)]
    if not torches:
        raise UsageError(f"no torch wheel in {dist}", "nox -s verify tests the wheels a build "
                         "leaves there", f"run `invoke build` first, or set {DIST_ENV} to the "
                         "folder holding torch-*.whl")
    if len(torches) > 1:
        raise UsageError(f"{dist} holds {len(torches)} torch wheels: "
                         f"{', '.join(w.name for w in torches)}",
                         "The session cannot tell which one was built for this target",
                         "keep one torch wheel there (move the others away) or use the manifest "
                         "`invoke build` writes")
    if not tritons:
        raise UsageError(f"no Triton wheel next to {torches[0].name} in {dist}",
                         "torch.compile on GPUs needs the Triton built with this torch",
                         "copy the Triton wheel (triton, pytorch_triton_rocm or triton_rocm) "
                         "from the build into dist/")
    if len(tritons) > 1:
        raise UsageError(f"{dist} holds {len(tritons)} Triton wheels: "
                         f"{', '.join(w.name for w in tritons)}", "",
                         "keep the one built with this torch")
    return WheelSet(torch=torches[0], triton=tritons[0])


def companion_wheels(dist: Path, manifest: Manifest) -> tuple[Path, ...]:
    """The companion and extension wheels the manifest lists (knowledge.manifest.listed_wheels,
    the list `invoke install` takes), in its order, after torch and Triton. Checked against dist/
    by refuse_disagreeing_dist, the one check every reader makes."""
    named = {manifest.wheels.get("torch"), manifest.wheels.get("triton")}
    return tuple(dist / name for name in listed_wheels(manifest) if name not in named)


def check_wheel_python(wheel: Path, supported: Iterable[object], python: str) -> None:
    """UsageError when no tag of `wheel` is one this interpreter accepts."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        _, _, _, tags = parse_wheel_filename(wheel.name)
    except InvalidWheelFilename as exc:
        raise UsageError(f"{wheel.name} is not a valid wheel file name ({exc})") from None
    accepted = set(supported)
    if tags & accepted:
        return
    shown = ", ".join(sorted(str(t) for t in tags))
    raise UsageError(
        f"{wheel.name} is built for {shown}, which Python {python} cannot install",
        "A wheel with native code is tied to one Python version and platform",
        f"run nox with the Python the wheel was built for (nox --force-python X.Y), or rebuild "
        f"with `invoke build` under Python {python}",
    )


def plan_session(target: str, *, dist: Path, environ: Mapping[str, str],
                 supported_tags: Iterable[object], python: str) -> VerifySession:
    """Decide one session, or raise the bad input it would trip on."""
    if target == NO_TARGETS:
        raise UsageError(
            f"nothing to verify: no {MANIFEST_NAME} in {dist}",
            "The verify sessions are made from the targets of a finished build",
            f"run `invoke build --arch <target>` first, set {DIST_ENV} to a folder with a "
            f"manifest, or set {TARGETS_ENV}=config to take the targets from the kit's settings",
        )
    manifest = manifest_in(dist)  # raises the precise error for BAD_MANIFEST
    if target == BAD_MANIFEST:
        config_targets(environ)  # raises the settings error when config was asked for
        raise UsageError("the verify targets could not be determined")
    if manifest is not None and target not in manifest.targets:
        raise TargetError(
            f"{target} is not a target of the build in {dist} "
            f"(built for: {', '.join(manifest.targets) or 'nothing'})",
            "Its wheels hold no code for it, so every check would fail",
            f"rebuild with `invoke build --arch \"{';'.join([*manifest.targets, target])}\"`, "
            f"or verify one of the built targets",
        )
    wheels = find_wheels(dist, manifest)
    supported = list(supported_tags)
    for wheel in wheels.paths:
        check_wheel_python(wheel, supported, python)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", target)
    return VerifySession(target=target, wheels=wheels, report=dist / "verify" / f"{safe}.json",
                         manifest=dist / MANIFEST_NAME if manifest is not None else None)


def bail(error: RocmforgeError) -> None:
    """One paragraph on stderr and exit with the error's code; nox shows no traceback."""
    sys.stderr.write(f"rocmforge: {error.paragraph()}\n")
    sys.stderr.flush()
    raise SystemExit(error.exit_code)


def read_report_exit(report: Path) -> int | None:
    """The verify run's exit code from its JSON report, None when it wrote none (exit 2)."""
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    code = data.get("exit_code") if isinstance(data, dict) else None
    return code if isinstance(code, int) else None


def environ_now() -> Mapping[str, str]:
    return os.environ


def kit_copy(root: Path, tmp: Path) -> Path:
    """A fresh copy of the kit's installable parts under `tmp` (nox's session tmp dir), so that
    `pip install` builds there and leaves no build/ or *.egg-info in the kit's own folder (a
    vendored copy is part of the user's repository)."""
    import shutil

    from rocmforge.sessions.vendor import KIT_PARTS

    dest = tmp / "rocmforge-kit"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info")
    for part in KIT_PARTS:
        source = root / part
        if source.is_dir():
            shutil.copytree(source, dest / part, ignore=ignore)
        elif source.is_file():
            shutil.copy2(source, dest / part)
    return dest


def sdk_index(manifest: Path | None) -> str:
    """The pip ROCm SDK index a build used (its manifest's rocm_sdk.index), "" when none."""
    if manifest is None:
        return ""
    try:
        doc = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    sdk = doc.get("rocm_sdk") if isinstance(doc, dict) else None
    return str(sdk.get("index") or "") if isinstance(sdk, dict) else ""
