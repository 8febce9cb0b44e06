"""Invoke tasks: doctor and env. Thin adapters: parse flags, call the library, print the report.

Imports only invoke and rocmforge.tasks._common at module level (`invoke --list` stays fast).
Must not: probe, judge or format anything itself; rocmforge.plan.doctor, probes and buildenv do.
"""

from __future__ import annotations

from invoke import Context, Exit, task

from rocmforge.tasks._common import reported, settings_for


@task(
    help={
        "arch": "GPU targets to check (gfx1100, 'gfx90a;gfx942', mi300, rdna3); default: the GPUs "
        "found",
        "rocm-path": "ROCm install to check (default: ROCM_PATH, HIP_PATH, /opt/rocm*, /usr)",
        "json": "print a versioned JSON document instead of a table",
    }
)
@reported
def doctor(c: Context, arch: str = "", rocm_path: str = "", json: bool = False) -> None:
    """Check this machine can build PyTorch for the targets; each FAIL comes with its fix."""
    import os

    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.plan.doctor import diagnose, doctor_json, exit_status
    from rocmforge.plan.prepare import doctor_facts
    from rocmforge.render import emit_json, print_table

    settings = settings_for(c, arch=arch, rocm_path=rocm_path)
    facts, targets = doctor_facts(settings, os.environ)
    rows = diagnose(facts, targets, settings, table=load_arch_table())
    code = exit_status(rows)
    if json:
        emit_json(doctor_json(facts, targets, rows))
    else:
        print_table(
            "rocmforge doctor",
            ("check", "status", "detail", "fix"),
            [(r.check, r.status, r.detail, r.fix) for r in rows],
            status_column=1,
        )
        failed = sum(r.status == "FAIL" for r in rows)
        warned = sum(r.status == "WARN" for r in rows)
        print(f"{failed} FAIL, {warned} WARN, {len(rows) - failed - warned} OK")
    if code:
        raise Exit(code=code)


@task(
    help={
        "arch": "GPU targets (gfx1100, 'gfx90a;gfx942', mi300); default: the GPUs found",
        "rocm-path": "ROCm install (default: ROCM_PATH, HIP_PATH, /opt/rocm*, /usr)",
        "format": "sh (default), fish, json, or github ($GITHUB_ENV lines)",
        "gcc": "export CC/CXX for this GCC major (e.g. 11)",
        "clang": "export CC/CXX for this Clang major (e.g. 16)",
    }
)
@reported
def env(
    c: Context,
    arch: str = "",
    rocm_path: str = "",
    format: str = "sh",  # noqa: A002 - the flag is --format
    # str, not int: Invoke casts an int flag inside its parser, so `--gcc abc` would end in a
    # traceback; settings_for() checks the text and raises a UsageError (exit 2) instead.
    gcc: str = "",
    clang: str = "",
) -> None:
    """Print the build environment, quoted so that eval "$(invoke env ...)" is safe."""
    import sys

    from rocmforge.errors import UsageError
    from rocmforge.plan.environment import FORMATS, format_env
    from rocmforge.plan.prepare import resolve_build_inputs

    if format not in FORMATS:
        raise UsageError(
            f"Unknown format {format!r}",
            "the environment can be printed for " + ", ".join(FORMATS),
            "pass --format sh (or fish, json, github)",
        )
    settings = settings_for(c, arch=arch, rocm_path=rocm_path, gcc=gcc, clang=clang)
    # The same environment `invoke build` uses: config/build.toml, the computed values (targets,
    # ROCm paths, MAX_JOBS, the CC/CXX the build would choose), then the build_env setting.
    inputs = resolve_build_inputs(settings)
    sys.stdout.write(format_env(dict(inputs.env), format))


TASKS: tuple = (doctor, env)
COLLECTIONS: tuple = ()
