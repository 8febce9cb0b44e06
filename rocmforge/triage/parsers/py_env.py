"""Python environments failing before any ROCm code runs: conda's solver finding no package
for a spec (ResolvePackageNotFound), and CPython's importlib.metadata API called in a way that
the installed Python does not support.

Owns: these families' rules, which read the spec or the calling package from the lines. Must
not: read files, run programs or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

_CONDA = ("conda/conda@0f64223fb:conda/exceptions.py (ResolvePackageNotFound: the message is "
          "'\\n' then one '  - <spec> -> <spec>' line per chain of specs not found)")


def _conda_not_found(match: re.Match[str], view: LineView) -> Reading | None:
    # Only the first chain after conda's heading is read: the list follows the
    # "ResolvePackageNotFound:" line directly.
    if not view.previous or not view.previous[-1].rstrip().endswith("ResolvePackageNotFound:"):
        return None
    chain = [s.strip() for s in match.group("chain").split(" -> ")]
    missing = chain[-1]
    name = re.split(r"[=<>!~ \[]", missing, maxsplit=1)[0].lower()
    if not name:
        return None
    via = f" (asked for through {' -> '.join(chain[:-1])})" if len(chain) > 1 else ""
    return Reading(
        subject=name,
        cause=f"conda's solver found no package matching {missing} in the channels it "
              f"searched{via}: the environment asks for (or pins) a {name} version those "
              "channels do not carry, so the install stops before anything is built",
        fix=f"relax or remove the {name} spec (conda-meta/pinned, the environment file or "
            f"the command line), or add the channel that carries it (`conda search "
            f"'{missing}'` shows whether any channel has it); for a pinned conda itself, "
            "update conda first or drop the pin")


# CPython: importlib.metadata.MetadataPathFinder.invalidate_caches is a plain function taking
# `cls` (not a classmethod), so calling it on the class raises this TypeError.
_SITE_FRAME = re.compile(r"[/\\]site-packages[/\\](?P<pkg>[A-Za-z_][\w]*)[/\\]")


def _metadata_finder_call(match: re.Match[str], view: LineView) -> Reading | None:
    caller = None
    for line in reversed(view.previous):
        frame = _SITE_FRAME.search(line) if line.startswith("File ") else None
        if frame:
            caller = frame.group("pkg")
            break
    if caller is None:
        return None
    return Reading(
        subject=caller,
        cause=f"{caller} calls importlib.metadata.MetadataPathFinder.invalidate_caches() on "
              "the class, and this Python defines it as a plain function that takes cls (not "
              "a classmethod), so the call fails with a TypeError; it is a bug of "
              f"{caller} on this Python version, not of the environment",
        fix=f"install a {caller} release that calls importlib.invalidate_caches() instead "
            f"(for TheRock's rocm_sdk: rocm packages built after ROCm/TheRock#5817), or run "
            f"{caller} with a Python whose importlib.metadata accepts the call")


RULES: tuple[Rule, ...] = (
    Rule(id="conda-resolve-package-not-found", klass="python-packaging",
         triggers=("- ",),
         pattern=rx(r"^- (?P<chain>[A-Za-z0-9_][\w.-]*(?:[\[=<>!~][^\s]*)?"
                    r"(?: -> [A-Za-z0-9_][\w.-]*(?:[\[=<>!~][^\s]*)?)*)$"),
         read=_conda_not_found, source=_CONDA + "; ROCm/pytorch#1243"),
    Rule(id="importlib-metadata-finder-invalidate-caches", klass="python-packaging",
         triggers=("invalidate_caches() missing 1 required positional argument",),
         pattern=rx(r"TypeError: MetadataPathFinder\.invalidate_caches\(\) missing 1 required "
                    r"positional argument: 'cls'"),
         read=_metadata_finder_call,
         source="reproduced: make/devpk7.sh (CPython 3.11.7 here: importlib/metadata/"
                "__init__.py MetadataPathFinder.invalidate_caches is `def "
                "invalidate_caches(cls)`, a plain function); ROCm/TheRock@89553ce37:build_tools/"
                "packaging/python/templates/rocm/src/rocm_sdk/_devel.py (now calls "
                "importlib.invalidate_caches()); ROCm/TheRock#5817"),
)
