"""Read a companion's version.txt at a branch or commit before the build starts.

Owns: `peek_version` (one shallow fetch of `ref` into a throw-away bare repository, then
`git show FETCH_HEAD:version.txt`) and `check_companion_refs`, which pairs each companion whose ref
states no version (a branch or a commit: a tag is checked by the plan) with the torch being
built, so a mismatched ref is refused before torch's first step, not after hours of its build.
Must not: touch the work dir (the checkout step does the real checkout) or fail a build because
the peek could not reach the remote: the checkout step reports that, with its advice, and the
pairing step checks the version again once the tree exists.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge.sources.checkout import git_config_for
from rocmforge.sources.git import run_git

if TYPE_CHECKING:
    from rocmforge.knowledge.companions import CompanionChoice, CompanionTable

VERSION_FILE = "version.txt"


def peek_version(repo: str, ref: str) -> str:
    """version.txt of `repo` at `ref` (first line, stripped); "" when the remote cannot be
    reached, the ref is unknown there, or the tree has no version.txt."""
    lines = peek_file(repo, ref, VERSION_FILE).strip().splitlines()
    return lines[0].strip() if lines else ""


def peek_file(repo: str, ref: str, path: str) -> str:
    """The text of `path` in `repo` at `ref` (one shallow fetch into a throw-away bare
    repository); "" when the remote cannot be reached, the ref is unknown or the file absent."""
    return peek_files(repo, ref, (path,))[0]


def peek_files(repo: str, ref: str, paths: Sequence[str]) -> tuple[str, ...]:
    """The texts of `paths` in `repo` at `ref`, from one shallow fetch; "" for each when the
    remote cannot be reached or the ref is unknown, and for a file that is absent."""
    with tempfile.TemporaryDirectory(prefix="rocmforge-peek-") as scratch:
        bare = Path(scratch)
        if not run_git(["init", "-q", "--bare", str(bare)], check=False).ok:
            return tuple("" for _ in paths)
        fetched = run_git(["fetch", "-q", "--depth", "1", "--no-tags", repo, ref], cwd=bare,
                          config=git_config_for(repo, {}), check=False)
        if not fetched.ok:
            return tuple("" for _ in paths)
        texts = []
        for path in paths:
            shown = run_git(["show", f"FETCH_HEAD:{path}"], cwd=bare, check=False)
            texts.append(shown.stdout if shown.ok else "")
        return tuple(texts)


def check_extension_pins(choices: Sequence[CompanionChoice], torch_version: str, *,
                         peek: Callable[[str, str, str], str] = peek_file) -> list[str]:
    """Every extension whose recipe names a torch pin file is paired with `torch_version` by
    that file at its ref, before the first step: a pin of another torch is a UsageError (both
    versions named); a file that cannot be read is a note (the pairing step checks again)."""
    from rocmforge.errors import UsageError
    from rocmforge.knowledge.extensions import pin_matches, pin_text, torch_pin_in

    notes: list[str] = []
    if not torch_version:
        return notes
    for choice in choices:
        if not choice.torch_pin_file:  # none named (every companion: version.txt pairs it)
            continue
        text = peek(choice.repo, choice.ref, choice.torch_pin_file)
        if not text:
            notes.append(f"{choice.name}: could not read {choice.torch_pin_file} at {choice.ref} "
                         f"from {choice.repo} before the build; the pairing step checks it "
                         "after the checkout")
            continue
        pinned = torch_pin_in(text, choice.torch_pin_pattern)
        if pinned and not pin_matches(pinned, torch_version):
            raise UsageError(
                f"{choice.name} at {choice.ref} pins {pin_text(pinned)} ({choice.torch_pin_file}), "
                f"but this build makes torch {torch_version}",
                f"{choice.name} would be built against one torch and need another at run time; "
                "refused before any step",
                f"build the {choice.name} ref whose {choice.torch_pin_file} pins torch "
                f"{torch_version} (--with {choice.name}@<ref>)"
                + (f", or build that torch (--ref v{pinned})" if pinned[:1].isdigit() else ""),
            )
    return notes


def check_extension_targets(
        choices: Sequence[CompanionChoice], *,
        peek: Callable[[str, str, Sequence[str]], tuple[str, ...]] = peek_files) -> list[str]:
    """Every extension whose recipe names where its tree lists the targets it accepts
    (flash-attention's setup.py, vLLM's CMakeLists.txt) or the files that read its variables
    is checked by those files at its ref (one fetch), before the first step: a target the tree
    does not list, or a variable it no longer reads, is a UsageError; files that cannot be
    read are a note (the pairing step checks again after the checkout)."""
    from rocmforge.knowledge.extensions import (
        targets_in,
        unaccepted_targets,
        unread_variables,
    )

    notes: list[str] = []
    for choice in choices:
        if not (choice.targets_file or choice.reads):  # nothing to read (every companion)
            continue
        paths = (*((choice.targets_file,) if choice.targets_file else ()), *choice.reads)
        texts = dict(zip(paths, peek(choice.repo, choice.ref, paths), strict=True))
        if not any(texts.values()):
            notes.append(f"{choice.name}: could not read {', '.join(paths)} at {choice.ref} "
                         "before the build; the pairing step reads them after the checkout")
            continue
        if choice.targets_file:
            refusal = unaccepted_targets(
                choice.name, choice.ref, choice.targets_file,
                targets_in(texts[choice.targets_file], choice.targets_pattern),
                choice.processors)
            if refusal is not None:
                raise refusal
        if choice.reads:
            unread = unread_variables(choice.name, choice.ref, choice.reads,
                                      [texts[f] for f in choice.reads], choice.read_vars)
            if unread is not None:
                raise unread
    return notes

def check_companion_refs(choices: Sequence[CompanionChoice], torch_version: str,
                         table: CompanionTable, *,
                         peek: Callable[[str, str], str] = peek_version) -> list[str]:
    """Pair every companion built at a branch or commit with `torch_version` by the version.txt
    its ref holds; a UsageError (both versions named) for one that cannot pair. Returns one
    note per ref it could not read (left to the pairing step). Nothing to do when the torch
    version is not known yet (a torch branch: the pairing step checks)."""
    from rocmforge.knowledge.companions import pairing

    notes: list[str] = []
    if not torch_version:
        return notes
    for choice in choices:
        if choice.skipped or choice.origin != "ref" or choice.version:
            continue
        version = peek(choice.repo, choice.ref)
        if not version:
            notes.append(f"{choice.name}: could not read {VERSION_FILE} at {choice.ref} from "
                         f"{choice.repo} before the build; the pairing step checks it after "
                         "the checkout")
            continue
        found = pairing(table.get(choice.name), version, torch_version)
        if not found.matches:
            raise found.refusal(f"the ref {choice.ref}, whose {VERSION_FILE} says {version}")
    return notes
