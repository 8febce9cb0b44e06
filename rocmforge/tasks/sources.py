"""Invoke tasks: sources (checkout, patch, triton.pin, triton.checkout).

Thin adapters: parse flags, call `rocmforge.sources`, print the report. Imports only invoke and
rocmforge.tasks._common at module level (`invoke --list` stays fast). Must not: run git or
parse pins itself; rocmforge.sources does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from invoke import Collection, Context

from rocmforge.settings import settings_of_flags
from rocmforge.tasks._common import holding_work_dir, is_dry, reported, settings_for
from rocmforge.tasks._flags import flagged

if TYPE_CHECKING:
    from rocmforge.sources.patches import PatchReport


@flagged(("ref", "repo", "lock", "work_dir"))
@reported
def checkout(c: Context, **flags: object) -> None:
    """Check out PyTorch at a ref, with submodules.

    Check out PyTorch at a ref with its submodules; never overwrites local changes."""
    from rocmforge.render import count, say
    from rocmforge.sources import checkout_pytorch

    settings = settings_for(c, **settings_of_flags(flags))
    if is_dry(c):
        say(f"dry run: would check out {settings.pytorch_repo} at "
            f"{settings.lock_file or settings.pytorch_ref}")
        return
    with holding_work_dir(settings, "checkout"):
        result, locked, lock_file = checkout_pytorch(settings, repo=str(flags["repo"]))
    state = "checked out" if result.changed else "already at"
    print(f"PyTorch {state} {result.ref} = {result.commit} in {result.path}")
    print(f"{count(len(result.submodules), 'submodule')}; lock written to {lock_file}")
    if locked.triton_commit:
        print(f"Triton pin: {locked.triton_commit} ({locked.triton_repo})")


@flagged(("work_dir",))
@reported
def patch(c: Context, check: bool = False, revert: bool = False, **flags: object) -> None:
    """Apply the patch series that fits the checkout.

    Apply the patch series whose Applies-To range matches the checkout, all or nothing."""
    from rocmforge.render import print_table
    from rocmforge.settings import settings_of_flags
    from rocmforge.sources import patch_sources

    settings = settings_for(c, **settings_of_flags(flags))
    if check or is_dry(c):
        reports = patch_sources(settings, check_only=True, revert=revert)
    else:
        with holding_work_dir(settings, "patch"):
            reports = patch_sources(settings, check_only=False, revert=revert)
    rows = []
    for report in reports:
        for status in report.statuses:
            header = status.patch.header
            upstream = f"{header.upstream_status} {header.upstream_url}".strip()
            rows.append((status.patch.project, status.patch.name, status.state, upstream))
    print_table("patches", ("project", "patch", "state", "upstream"), rows, status_column=2)
    print(patch_summary(reports, check=check or is_dry(c), revert=revert))


def patch_summary(reports: Sequence[PatchReport], *, check: bool, revert: bool) -> str:
    """The last line of `invoke patch`: what was done, or under --check (and --dry) what would
    be done, from the states in the table ("applies" is applied, "applied" is reverted)."""
    from rocmforge.sources.patches import APPLIED, APPLIES

    if not check:
        done = [name for r in reports for name in r.changed]
        verb = "reverted" if revert else "applied"
        return f"{verb}: {', '.join(done) if done else 'nothing to do'}"
    wanted = APPLIED if revert else APPLIES
    todo = [s.patch.name for r in reports for s in r.statuses if s.state == wanted]
    verb = "would revert" if revert else "would apply"
    if not todo:
        return f"{verb}: nothing (--check changes nothing)"
    return (f"{verb}: {', '.join(todo)} (--check changes nothing; run `invoke patch"
            f"{' --revert' if revert else ''}` to do it)")


@flagged(("work_dir",), help={"ref": "read the pin of this PyTorch ref over HTTP (pin_url) "
                               "instead of the checkout"})
@reported
def pin(c: Context, ref: str = "", json: bool = False, timeout: str = "10",
        **flags: object) -> None:
    """Print the Triton commit the PyTorch ref pins.

    Print the Triton commit, version, repository and wheel name the PyTorch ref pins."""
    # `timeout` is text, not float: Invoke casts typed flags inside its parser, so a bad value
    # would end in a traceback there instead of this task's one-paragraph error.
    from rocmforge.errors import UsageError
    from rocmforge.render import emit_json
    from rocmforge.sources import pin_of_checkout
    from rocmforge.sources.triton_pin import fetch_pin
    from rocmforge.workdir import workdir_for

    try:
        timeout_s = float(timeout)
    except ValueError:
        raise UsageError(
            f"--timeout {timeout!r} is not a number of seconds",
            "it bounds the wait for each HTTP reply",
            "pass a number, e.g. --timeout 10",
        ) from None
    from rocmforge.settings import settings_of_flags

    settings = settings_for(c, **settings_of_flags(flags))
    if ref:
        found = fetch_pin(settings.pin_url, ref, timeout=timeout_s)
        source = f"{settings.pin_url} at {ref}"
    else:
        work = workdir_for(settings.work_dir)
        found = pin_of_checkout(work)
        source = str(work.pytorch)
    repo = settings.triton_repo or found.repo
    if json:
        emit_json(
            {"schema": "rocmforge.triton_pin/1", "source": source, **found.as_dict(), "repo": repo}
        )
        return
    print(f"commit     {found.commit}")
    print(f"version    {found.version or '(no triton_version.txt)'}")
    print(f"repo       {repo}")
    print(f"wheel      {found.wheel_name}")
    print(f"pin file   {found.pin_file} ({source})")


@flagged(name="checkout")
@reported
def triton_checkout(c: Context) -> None:
    """Check out the Triton commit PyTorch pins.

    Check out Triton at exactly the commit the PyTorch checkout pins, with submodules."""
    from rocmforge.render import say
    from rocmforge.sources import checkout_triton

    settings = settings_for(c)
    if is_dry(c):
        say("dry run: would check out Triton at the pinned commit")
        return
    with holding_work_dir(settings, "triton.checkout"):
        result, found = checkout_triton(settings)
    state = "checked out" if result.changed else "already at"
    print(
        f"Triton {state} {found.commit} ({found.pin_file}, version {found.version}) "
        f"from {result.repo} in {result.path}"
    )


triton_collection = Collection("triton")
triton_collection.add_task(pin)
triton_collection.add_task(triton_checkout)

# Tasks of this module, added to the `rocm` collection by rocmforge.tasks.
TASKS: tuple = (checkout, patch)
# Sub-collections, added by name.
COLLECTIONS: tuple = (triton_collection,)
