"""Invoke tasks: doctor and env. Thin adapters: parse flags, call the library, print the report.

Imports only invoke and rocmforge.tasks._common at module level (`invoke --list` stays fast).
Must not: probe, judge or format anything itself; rocmforge.plan.doctor, probes and buildenv do.
"""

from __future__ import annotations

from invoke import Context, Exit

from rocmforge.settings import settings_of_flags
from rocmforge.tasks._common import reported, settings_for
from rocmforge.tasks._flags import flagged


@flagged(("arch", "rocm_path", "work_dir", "ref", "repo", "gcc", "clang", "allow_compiler",
          "with_"))
@reported
def doctor(c: Context, json: bool = False, no_cache: bool = False, **flags: object) -> None:
    """Check that this machine can build PyTorch.

    Check this machine can build PyTorch for the targets; each FAIL comes with its fix."""
    import os

    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.plan.doctor import check_addon_words, diagnose
    from rocmforge.plan.doctor_row import (
        TABLE_COLUMNS,
        doctor_json,
        exit_status,
        table_cells,
        tally,
    )
    from rocmforge.plan.download_rows import aotriton_download_doctor
    from rocmforge.plan.gather import cache_doctor_rows, doctor_facts
    from rocmforge.plan.preflight_more import more_preflight_rows
    from rocmforge.plan.sdk_index_row import sdk_index_rows
    from rocmforge.plan.triton_probe_rows import triton_probe_rows
    from rocmforge.probes.probe_store import enabled
    from rocmforge.render import emit_json, print_table

    settings = settings_for(c, **settings_of_flags(flags))
    check_addon_words(settings)  # `--with` as plan and build take it
    use_cache = not no_cache and enabled(os.environ)
    found = doctor_facts(settings, os.environ, use_cache=use_cache)
    facts, targets = found.facts, found.targets
    rows = diagnose(facts, targets, settings, table=load_arch_table(), release=found.release,
                    components=found.components)
    if found.triton is not None:
        rows += triton_probe_rows(found.triton, pin_version=found.release.triton_version)
    if found.features is not None:  # the optional parts: components found / missing, targets
        rows += found.features.rows
    rows += tuple(aotriton_download_doctor(settings, facts, [str(t) for t in targets],
                                           found.pytorch, found.features))
    rows += tuple(more_preflight_rows(settings, facts, [str(t) for t in targets],
                                      {**os.environ, **settings.build_env}))
    rows += tuple(sdk_index_rows(settings, facts, [str(t) for t in targets]))
    rows += cache_doctor_rows(settings, facts, targets, environ=os.environ,
                              use_cache=use_cache, pytorch=found.pytorch,
                              components=found.components)
    code = exit_status(rows)
    if json:
        emit_json(doctor_json(facts, targets, rows))
    else:
        print_table("rocmforge doctor", TABLE_COLUMNS, table_cells(rows), status_column=1)
        print(tally(rows))
    if code:
        raise Exit(code=code)


@flagged(("arch", "rocm_path", "gcc", "clang", "work_dir", "ref", "allow_compiler"))
@reported
def env(c: Context, format: str = "sh", **flags: object) -> None:  # noqa: A002 - the flag
    """Print the build environment as shell lines.

    Print the build environment, quoted so that eval "$(invoke env ...)" is safe."""
    import sys

    from rocmforge.errors import UsageError
    from rocmforge.plan.environment import FORMATS, format_env
    from rocmforge.plan.gather import gather_input_facts
    from rocmforge.plan.prepare import build_inputs

    if format not in FORMATS:
        raise UsageError(
            f"Unknown format {format!r}",
            "the environment can be printed for " + ", ".join(FORMATS),
            "pass --format sh (or fish, json, github)",
        )
    settings = settings_for(c, **settings_of_flags(flags))
    # The same environment `invoke build` uses: config/build.toml, the computed values (targets,
    # ROCm paths, MAX_JOBS, the CC/CXX the build would choose), then the build_env setting.
    inputs = build_inputs(settings, gather_input_facts(settings))
    sys.stdout.write(format_env(dict(inputs.env), format))


TASKS: tuple = (doctor, env)
COLLECTIONS: tuple = ()
