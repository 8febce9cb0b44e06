"""The companion part of the build plan: torchvision / torchaudio after torch, as plain Steps.

Owns: turning the `companions` setting into CompanionChoices for the torch being built
(knowledge.companions.choose: a mismatched ref whose version the tag states is refused here,
before any step runs) and the steps of each companion: checkout (volatile unless a commit),
pairing (its version.txt against the installed torch), patches (volatile: the series is
re-read), build (`pip wheel --no-build-isolation --no-deps` in the build venv, with the build
environment and the companion's ROCm variables), then one collect (dist/ + manifest) and one
install for all of them. Pure: no file access, no subprocess.

Why after torch's install, and not between torch's build and collect: the companion's setup.py
imports torch, so the just-built torch must be installed in the build venv first; and a step
with no stamp redoes every step after it, so steps added by a new `--with` must come last, or
adding torchvision to a finished build would rebuild torch.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rocmforge.errors import UsageError
from rocmforge.execute.action_args import ForAddon, ForAddonInVenv, InVenv
from rocmforge.execute.model import Effects, Step
from rocmforge.execute.step_inputs import (
    AddonCheckout,
    AddonsClear,
    AddonsCollect,
    AddonsInstall,
    AddonSource,
    CompanionPairing,
    ExtensionPairing,
    FolderCopy,
)
from rocmforge.knowledge.addons import KIND_COMPANION, KIND_EXTENSION
from rocmforge.knowledge.companions import CompanionChoice, choose, parse_requests
from rocmforge.knowledge.extensions import FORM_FOLDER
from rocmforge.knowledge.steps import FAMILY, STEP
from rocmforge.sources.constraints import pin_effects, unpinned_env

if TYPE_CHECKING:
    from rocmforge.knowledge.addon_table import AddOnTables
    from rocmforge.settings import Settings
    from rocmforge.workdir import WorkDir

_FULL_SHA = re.compile(r"[0-9a-f]{40}")
# The companion build: pip builds the wheel in the tree with the venv's setuptools and torch
# (no isolated env, which would pull a torch from the index), and no dependencies; --verbose
# puts setup.py's own output (the compiler lines) in the step's log, where triage reads it.
PIP_WHEEL = ("-m", "pip", "wheel", "--verbose", "--no-build-isolation", "--no-deps",
             "--wheel-dir")


def companion_choices(settings: Settings, tables: AddOnTables,
                      torch_version: str) -> tuple[CompanionChoice, ...]:
    """What to do about each companion the settings name (in the order given), from the
    add-on tables as gathered (no file read here)."""
    from rocmforge.knowledge.extensions import split_with

    table = tables.companions
    words, _ = split_with(settings.companions, tables.extensions)
    requests = parse_requests(words, table)
    unknown = sorted(set(settings.companion_repos) - set(table.names)
                     - set(tables.addons.names))
    if unknown:
        raise UsageError(
            f"setting companion_repos names {', '.join(unknown)}, which is no companion or "
            "extension recipe",
            "companion_repos maps a companion's or a recipe's name to the repository to build "
            "it from",
            f"use the names {', '.join(tables.addons.names)}",
        )
    return tuple(choose(r, table.get(r.name), torch_version,
                        repo=settings.companion_repos.get(r.name, ""))
                 for r in requests)


def tree_of(workdir: WorkDir, name: str) -> str:
    """Where a companion is checked out: <work>/src/<name>."""
    return str(workdir.src / name)


def companion_steps(choices: Sequence[CompanionChoice], *, workdir: WorkDir,
                    build_env: Mapping[str, str], pip_env: Mapping[str, str],
                    mirrors: Mapping[str, str]) -> list[Step]:
    """The steps of the companions that are built (skipped ones have none), then collect and
    install; [] when none is built."""
    built = [c for c in choices if not c.skipped]
    if not built:
        return []
    venv_python = str(workdir.venv / "bin" / "python")
    steps: list[Step] = []
    for choice in built:
        tree = tree_of(workdir, choice.name)
        # a folder: its content's digest too
        source = AddonSource(repo=choice.repo, ref=choice.ref, digest=choice.digest)
        steps += [
            _folder_copy(choice, tree) if choice.form == FORM_FOLDER else Step(
                name=FAMILY.checkout.name_for(choice.name),
                kind="python",
                args=ForAddon(action="companion-checkout", addon=choice.name),
                why=f"{choice.name} at {choice.ref} ({_origin(choice)}), never over local "
                "changes",
                effects=Effects(fetches=(f"{choice.repo} {choice.ref}",), writes=(tree,),
                                notes=("git fetch (depth 1 where the server allows), checkout, "
                                       "submodule update --recursive, as for PyTorch",)),
                given=AddonCheckout(source=source, dest=tree, mirrors=tuple(
                    f"{k}={v}" for k, v in sorted(mirrors.items()))),
                volatile=not _FULL_SHA.fullmatch(choice.ref.strip()),
                outputs=(f"{tree}/.git",),
            ),
            _PER_KIND[choice.kind].pairing(choice, tree, venv_python, source),
            Step(
                name=FAMILY.patches.name_for(choice.name),
                kind="python",
                args=ForAddon(action="companion-patches", addon=choice.name),
                why=f"apply the patch series patches/{choice.name}/ selected by its version "
                "(none = nothing to do)",
                effects=Effects(writes=(tree, str(workdir.lock_file)),
                                notes=(f"`git apply` of each patches/{choice.name}/NNNN-*.patch "
                                       "whose Applies-To matches the version.txt; re-checked on "
                                       "every build (an edited series redoes the build)",
                                       "records the commit and patches in rocmforge.lock",)),
                # Not the other companions of this build: adding or dropping one must not
                # redo this one (companions-collect drops the lock's entries of the others).
                given=source,
                volatile=True,
            ),
            *_pre_build_steps(choice, tree, build_env),
            Step(
                name=FAMILY.build.name_for(choice.name),
                argv=(venv_python, *PIP_WHEEL, f"{tree}/dist", "."),
                why=f"compile and package the {choice.name} wheel against the installed torch, "
                "for the same targets and ROCm environment",
                cwd=tree,
                # The venv's pin of the last build's wheels would refuse the version built now.
                env=dict(sorted({**build_env, **choice.build_env,
                                 **unpinned_env(workdir.venv)}.items())),
                inputs=source.inputs,
            ),
        ]
    names = tuple(c.name for c in built)
    steps += [
        Step(
            name=STEP.companions_collect,
            kind="python",
            argv=("companions-collect",),
            why=f"copy the {', '.join(names)} wheel(s) to dist/ and add them to "
            "dist/manifest.json",
            effects=Effects(reads=tuple(f"{tree_of(workdir, n)}/dist/" for n in names),
                            writes=(str(workdir.dist), str(workdir.dist / "manifest.json"))),
            given=AddonsCollect(companions=names, dist=str(workdir.dist),
                                packages=tuple(c.package for c in built)),
            outputs=(str(workdir.dist / "manifest.json"),),
        ),
        Step(
            name=STEP.companions_install,
            kind="python",
            args=InVenv(action="companions-install", python=venv_python),
            why="install the companion wheels into the build venv, then pin it to them and "
            "to torch",
            effects=Effects(commands=((venv_python, "-m", "pip", "install", "--no-deps",
                                       "--force-reinstall",
                                       *(f"{workdir.dist}/<{n} wheel>" for n in names)),),
                            writes=pin_effects(workdir.venv)[0],
                            notes=("the wheel names are the ones companions-collect recorded",
                                   pin_effects(workdir.venv)[1])),
            env=dict(pip_env),
            given=AddonsInstall(companions=names, dist=str(workdir.dist)),
        ),
    ]
    return steps


def _folder_copy(choice: CompanionChoice, tree: str) -> Step:
    """A plain folder's "checkout": its files copied into the work dir, keyed by their digest
    (a changed file is a new digest, so the copy and every later step of it run again)."""
    return Step(
        name=FAMILY.checkout.name_for(choice.name),
        kind="python",
        args=ForAddon(action="extension-copy", addon=choice.name),
        why=f"copy the folder {choice.repo} (content sha256:{choice.digest[:12]}) into the work "
            "dir; the build never writes into your folder",
        effects=Effects(reads=(choice.repo,), writes=(tree,),
                        notes=("without .git, build/, dist/, *.egg-info and __pycache__; an "
                               "earlier copy is replaced",)),
        given=FolderCopy(folder=choice.repo, digest=choice.digest, dest=tree),
        outputs=(tree,),
    )


def _companion_pairing(choice: CompanionChoice, tree: str, venv_python: str,
                       source: AddonSource) -> Step:
    """A companion's pairing: its version.txt against the torch the build venv imports."""
    return Step(
        name=FAMILY.pairing.name_for(choice.name),
        kind="python",
        args=ForAddonInVenv(action="companion-pairing", addon=choice.name, python=venv_python),
        why=f"{choice.name}'s version.txt against the torch installed in the build "
        "venv: a release built for another torch stops here, before its build",
        effects=Effects(reads=(f"{tree}/version.txt",),
                        commands=((venv_python, "-c", "import torch; "
                                   "print(torch.__version__)"),),
                        notes=("the version.txt first, the version the table expects "
                               "second; the required torch from config/companions.toml",)),
        # Not the torch version the plan knows: it reads "2.8.0" from a tag before the
        # checkout and "2.8.0a0" from version.txt after, and the step checks the torch
        # the venv really imports (a new torch redoes this step anyway: it comes later).
        given=CompanionPairing(source=source, version=choice.version,
                               requires=choice.requires),
    )


def _extension_pairing(choice: CompanionChoice, tree: str, venv_python: str,
                       source: AddonSource) -> Step:
    """An extension's pairing: the torch its tree pins (when its recipe names the file) against
    the torch the build venv imports, and its version from the file the recipe names."""
    reads = tuple(f"{tree}/{f}" for f in dict.fromkeys(
        (choice.torch_pin_file, choice.version_file, choice.targets_file, *choice.reads)) if f)
    return Step(
        name=FAMILY.pairing.name_for(choice.name),
        kind="python",
        args=ForAddonInVenv(action="extension-pairing", addon=choice.name, python=venv_python),
        why=f"{choice.name}'s own torch pin, version, the targets and variables its tree reads, "
            "against the torch installed in the build venv and this build: a mismatch stops "
            "here, before its build",
        effects=Effects(reads=reads, commands=((venv_python, "-c", "import torch; "
                                                "print(torch.__version__)"),)),
        given=ExtensionPairing(
            source=source, torch_pin_file=choice.torch_pin_file,
            torch_pin_pattern=choice.torch_pin_pattern, version_file=choice.version_file,
            version_pattern=choice.version_pattern, backend=choice.backend,
            module=choice.module, verify=choice.verify, targets_file=choice.targets_file,
            targets_pattern=choice.targets_pattern, processors=tuple(choice.processors),
            reads=tuple(choice.reads), read_vars=tuple(choice.read_vars),
            variables=tuple(choice.build_env.items())),
    )


def _pre_build_steps(choice: CompanionChoice, tree: str,
                     build_env: Mapping[str, str]) -> list[Step]:
    """The commands an extension's recipe runs in its tree before the wheel build (CMake for
    bitsandbytes), each a plain step with the build's environment and its own variables; none
    for an add-on without such commands (every companion)."""
    env = dict(sorted({**build_env, **choice.build_env}.items()))
    return [Step(name=FAMILY.prepare.name_for(choice.name, index), argv=argv,
                 why=f"{choice.name}'s own build before its wheel ({argv[0]}, from "
                     "config/extensions.toml)",
                 cwd=tree, env=env, inputs={"repo": choice.repo, "ref": choice.ref})
            for index, argv in enumerate(choice.pre_build, start=1)]


def clear_step(names: tuple[str, ...], workdir: WorkDir) -> Step:
    """The step of a build that makes no companion while dist/ still lists some (an earlier
    `--with` build): the manifest must describe only what this build made. Planned only while
    the manifest names companions, so it runs once."""
    return Step(
        name=STEP.companions_clear,
        kind="python",
        argv=("companions-clear",),
        why=f"this build makes no companion: take the earlier {', '.join(names)} wheel(s) out "
            "of dist/, the manifest and the lock",
        effects=Effects(writes=(str(workdir.dist), str(workdir.dist / "manifest.json"),
                                str(workdir.lock_file)),
                        notes=("the companions' collect and install stamps are dropped, so a "
                               "later --with adds them back; their trees and builds stay",)),
        given=AddonsClear(remove=names, dist=str(workdir.dist)),
        volatile=True,
    )


def companion_notes(choices: Sequence[CompanionChoice]) -> list[str]:
    """One note per add-on: what is built and why that ref, or why it is skipped."""
    notes: list[str] = []
    for choice in choices:
        notes += _PER_KIND[choice.kind].notes(choice)
    return notes


def _companion_notes(choice: CompanionChoice) -> list[str]:
    if choice.skipped:
        return [f"{choice.name} is skipped: {choice.skipped}"]
    return [f"{choice.name}: {choice.ref} from {choice.repo} ({_origin(choice)})"]


def _extension_notes(choice: CompanionChoice) -> list[str]:
    from rocmforge.plan.extensions import extension_notes

    return extension_notes([choice])


@dataclass(frozen=True, kw_only=True)
class _KindSteps:
    """What differs between the kinds of add-on in the plan: the step that pairs one with the
    torch being built, its notes, and what "your ref" is checked by."""

    pairing: Callable[[CompanionChoice, str, str, AddonSource], Step]
    notes: Callable[[CompanionChoice], list[str]]
    ref_checked: str  # "" = by the version its ref states (a companion's table)


_PER_KIND: Mapping[str, _KindSteps] = {
    KIND_COMPANION: _KindSteps(pairing=_companion_pairing, notes=_companion_notes,
                               ref_checked=""),
    KIND_EXTENSION: _KindSteps(pairing=_extension_pairing, notes=_extension_notes,
                               ref_checked="its own torch pin is checked once checked out"),
}


def _origin(choice: CompanionChoice) -> str:
    if choice.origin == "recipe":
        return "the recipe's ref in config/extensions.toml; its own torch pin is checked"
    if choice.origin == "ref" and _PER_KIND[choice.kind].ref_checked:
        return f"your ref; {_PER_KIND[choice.kind].ref_checked}"
    if choice.origin == "ref":
        return ("your ref; its version " + (f"{choice.version} needs torch {choice.requires}"
                                            if choice.requires else
                                            "is checked against torch once checked out"))
    if choice.origin == "main":
        return ("the torch being built names no release: main, checked against torch once "
                "checked out")
    rule = " (the rule beyond the table's rows)" if choice.origin == "rule" else ""
    return f"the release for this torch{rule}: {choice.version}, needs torch {choice.requires}"
