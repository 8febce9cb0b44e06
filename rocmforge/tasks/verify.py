"""Invoke tasks: verify. Thin adapters: parse flags, call the library, print the report.

`invoke verify` runs the verify suite (rocmforge.verify) in the current environment, the same
checks `nox -s verify(<target>)` runs in a fresh venv. Imports only invoke and _common at module
level so `invoke --list` stays fast. Must not: run checks itself; it only turns flags (and the
arch setting, aliases expanded) into the suite's command line.
"""

from __future__ import annotations

from invoke import Context, Exit

from rocmforge.tasks._common import reported, settings_for
from rocmforge.tasks._flags import flagged
from rocmforge.verify.model import CHECK_NAMES


@flagged(help={"json": "write the JSON report (schema rocmforge.verify/1) to this file",
               "expect": "targets the build must contain (default: the `arch` setting)",
               "only": f"comma-separated checks: {','.join(CHECK_NAMES)}"})
@reported
def verify(c: Context, json: str = "", device: str = "auto", only: str = "", expect: str = "",
           comm_sizes: str = "", comm_timeout: str = "") -> None:
    """Check the installed PyTorch on this GPU machine.

    Check the installed PyTorch on this machine's GPUs (table + JSON report)."""
    # comm_timeout is text, not float: Invoke casts typed flags inside its parser (a traceback on
    # `--comm-timeout abc`); the verify command line checks it and exits 2 with one paragraph.
    from rocmforge.verify.__main__ import main

    settings = settings_for(c)
    expect = expected_targets(expect or settings.arch)
    argv = ["--device", device]
    from rocmforge.workdir import workdir_for

    manifest = workdir_for(settings.work_dir).dist / "manifest.json"
    if manifest.is_file():  # the optional parts the last build says it built
        argv += ["--manifest", str(manifest)]
    for flag, value in (("--json", json), ("--only", only), ("--expect", expect),
                        ("--comm-sizes", comm_sizes), ("--comm-timeout", comm_timeout)):
        if value:
            argv += [flag, value]
    code = main(argv)
    if code:
        raise Exit(code=code)


def expected_targets(text: str) -> str:
    """--expect (or the arch setting) as canonical target IDs: aliases expanded, typos refused.

    The verify suite compares target IDs literally and cannot read the kit's alias table in a
    bare venv, so `mi300` must become `gfx942` here. CUDA arches (sm_90) pass through unchanged:
    the same suite checks CUDA builds.
    """
    import re

    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.knowledge.targets import parse_targets, targets_for_cmake

    tokens = [t for t in re.split(r"[;,\s]+", text) if t]
    cuda = [t for t in tokens if re.fullmatch(r"sm_\d+[a-z]?", t.lower())]
    amd = [t for t in tokens if t not in cuda]
    canonical = [targets_for_cmake(parse_targets(amd, load_arch_table()))] if amd else []
    return ";".join(canonical + cuda)


# Tasks of this module, added to the `rocm` collection by rocmforge.tasks.
TASKS: tuple = (verify,)
# Sub-collections (e.g. `triton`), added by name.
COLLECTIONS: tuple = ()
