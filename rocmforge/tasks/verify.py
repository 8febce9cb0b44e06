"""Invoke tasks: verify. Thin adapters: parse flags, call the library, print the report.

`invoke verify` runs the verify suite (rocmforge.verify) in the current environment, the same
checks `nox -s verify(<target>)` runs in a fresh venv. Imports only invoke and _common at module
level so `invoke --list` stays fast.
"""

from __future__ import annotations

from invoke import Context, Exit, task

from rocmforge.tasks._common import reported, settings_for


@task(
    help={
        "json": "write the JSON report (schema rocmforge.verify/1) to this file",
        "device": "cuda (ROCm and CUDA builds), cpu, or auto (cuda when a GPU is visible)",
        "only": "comma-separated checks: build,arch,static,ops,attention,triton,memory,perf,comm",
        "expect": "targets the build must contain (default: the `arch` setting)",
        "comm_sizes": "message sizes for comm, e.g. 1KiB,1MiB,1GiB",
        "comm_timeout": "seconds without progress before comm is declared hung",
    }
)
@reported
def verify(c: Context, json: str = "", device: str = "auto", only: str = "", expect: str = "",
           comm_sizes: str = "", comm_timeout: float = 0.0) -> None:
    """Check the installed PyTorch on this machine's GPUs (table + JSON report)."""
    from rocmforge.verify.__main__ import main

    if not expect:
        expect = settings_for(c).arch
    argv = ["--device", device]
    for flag, value in (("--json", json), ("--only", only), ("--expect", expect),
                        ("--comm-sizes", comm_sizes)):
        if value:
            argv += [flag, value]
    if comm_timeout > 0:
        argv += ["--comm-timeout", str(comm_timeout)]
    code = main(argv)
    if code:
        raise Exit(code=code)


# Tasks of this module, added to the `rocm` collection by rocmforge.tasks.
TASKS: tuple = (verify,)
# Sub-collections (e.g. `triton`), added by name.
COLLECTIONS: tuple = ()
