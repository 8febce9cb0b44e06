"""Pipeline stage for the extensions (flash-attention, bitsandbytes, ... or any repository):
the copy of a plain folder, and the pairing of the tree with the torch the build venv imports.

Owns: the extension-copy action (a plain folder's files into <work>/src/<name>, replacing an
earlier copy only once the new one is whole, and its digest checked against the plan's: a
folder edited since the plan stops here, exit 2), the extension-pairing action: the torch
the tree pins in the file its recipe names (vLLM's requirements/rocm-build.txt) against the
torch installed in the build venv (a tree pinned to another torch stops here, before its
build), its version from the file the recipe names (a plain folder's: its content digest), and
the facts the manifest keeps for it (backend, variables, module, verify op). Every other step
of an extension is a companion's (rocmforge.steps.companions). Must not: decide the ref, the
backend or the variables (rocmforge.plan.extensions does).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge.errors import UsageError
from rocmforge.execute.action_args import ForAddon, ForAddonInVenv
from rocmforge.execute.actions import ActionContext, Details
from rocmforge.execute.step_inputs import ExtensionPairing, FolderCopy

if TYPE_CHECKING:
    from rocmforge.plan.prepare import PreparedBuild


def copy(build: PreparedBuild, ctx: ActionContext) -> Details:
    import shutil

    from rocmforge.sources.extension_sources import copy_folder

    name = ctx.args(ForAddon).addon
    given = ctx.given(FolderCopy)
    folder, digest = Path(given.folder), given.digest
    tree = ctx.workdir.src / name
    fresh = ctx.workdir.src / f".{name}.copying"
    for leftover in (fresh, ctx.workdir.src / f".{name}.old"):  # a killed run's, ours
        if leftover.is_symlink() or leftover.is_file():
            leftover.unlink()
        elif leftover.is_dir():
            shutil.rmtree(leftover)
    copied = copy_folder(folder, fresh)
    if copied != digest:
        shutil.rmtree(fresh)
        raise UsageError(
            f"{folder} changed since this build was planned (its files' digest is now "
            f"{copied[:12]}, the plan's {digest[:12]})",
            "the build takes a folder as it was when planned, so that the manifest names "
            "what was built", "run the build again once the folder is as you want it")
    if tree.is_symlink() or tree.is_file():
        tree.unlink()
    elif tree.exists():
        tree.rename(ctx.workdir.src / f".{name}.old")
    fresh.rename(tree)
    shutil.rmtree(ctx.workdir.src / f".{name}.old", ignore_errors=True)
    ctx.say(f"copied {folder} to {tree} (sha256:{digest[:12]})")
    return {"commit": "", "ref": "", "repo": str(folder), "digest": digest,
            "fingerprint": digest}


def pairing(build: PreparedBuild, ctx: ActionContext) -> Details:
    from rocmforge.knowledge.extensions import pin_matches, pin_text, torch_pin_in
    from rocmforge.steps.companions import installed_torch

    args = ctx.args(ForAddonInVenv)
    name, python = args.addon, args.python
    inputs = ctx.given(ExtensionPairing)
    tree = ctx.workdir.src / name
    torch_version = installed_torch(ctx, python)
    pin_file = inputs.torch_pin_file
    pinned = ""
    if pin_file:
        try:
            text = (tree / pin_file).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
            ctx.say(f"{name}: no {pin_file} in the checkout; it pins no torch")
        pinned = torch_pin_in(text, inputs.torch_pin_pattern)
        if pinned and not pin_matches(pinned, torch_version):
            raise UsageError(
                f"{name} at {inputs.source.ref} pins {pin_text(pinned)} ({tree / pin_file}), but "
                f"this build made torch {torch_version}",
                f"{name} would be built against one torch and want another at run time",
                f"build the {name} ref whose {pin_file} pins torch {torch_version.split('+')[0]}"
                f" (--with {name}@<ref>)" + (f", or build that torch (--ref v{pinned})"
                                               if pinned[:1].isdigit() else ""),
            )
    # A plain folder's version is its content digest (what the lock and the manifest name).
    digest = inputs.source.digest
    version = f"sha256:{digest}" if digest else ""
    accepted = _accepted_targets(inputs, ctx, name, tree)
    _check_variables_read(inputs, name, tree)
    version_file = "" if digest else inputs.version_file
    if version_file:
        try:
            text = (tree / version_file).read_text(encoding="utf-8", errors="replace")
            match = re.search(inputs.version_pattern, text, re.MULTILINE)
            version = match.group(1).strip() if match else ""
        except OSError:
            pass
    ctx.say(f"{name} {version or '(version from its wheel)'}: "
            + (f"pins {pin_text(pinned)}, " if pinned else "pins no torch, ")
            + (f"accepts {', '.join(accepted)}, " if accepted else "")
            + f"the build venv has torch {torch_version}")
    variables = dict(inputs.variables)
    return {"version": version,
            "version_source": (f"{inputs.source.repo}'s files" if digest else
                               f"{tree / version_file}" if version else "the wheel's name"),
            "torch": torch_version, "requires": f"=={pinned}" if pinned else "",
            "kind": "extension", "backend": inputs.backend,
            "module": inputs.module, "verify": inputs.verify,
            "variables": variables}


def _accepted_targets(inputs: ExtensionPairing, ctx: ActionContext, name: str,
                      tree: Path) -> tuple[str, ...]:
    """The targets the tree says it accepts (the file and pattern its recipe names), every
    target of this build checked against them: one it does not list stops here (exit 2),
    before the compile. () when the recipe names no such file."""
    from rocmforge.knowledge.extensions import targets_in, unaccepted_targets

    where = inputs.targets_file
    if not where:
        return ()
    try:
        text = (tree / where).read_text(encoding="utf-8", errors="replace")
    except OSError:
        ctx.say(f"{name}: no {where} in the checkout; the targets it accepts are not checked")
        return ()
    accepted = targets_in(text, inputs.targets_pattern)
    if not accepted:
        ctx.say(f"{name}: {where} lists no targets where the recipe looks; not checked")
        return ()
    refusal = unaccepted_targets(name, inputs.source.ref, where, accepted,
                                 list(inputs.processors))
    if refusal is not None:
        raise refusal
    return accepted


def _check_variables_read(inputs: ExtensionPairing, name: str, tree: Path) -> None:
    """Every variable the recipe sets is named in the files its recipe says read them."""
    from rocmforge.knowledge.extensions import unread_variables

    reads = list(inputs.reads)
    if not reads:
        return
    texts = []
    for where in reads:
        try:
            texts.append((tree / where).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            texts.append("")
    refusal = unread_variables(name, inputs.source.ref, reads, texts, list(inputs.read_vars))
    if refusal is not None:
        raise refusal
