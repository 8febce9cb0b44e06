"""Invoke tasks: doctor and env. Thin adapters: parse flags, call the library, print the report.

Imports only invoke and rocmforge.tasks._common at module level (`invoke --list` stays fast).
Must not: probe, judge or format anything itself; rocmforge.doctor, probes and buildenv do.
"""

from __future__ import annotations

from invoke import Context, Exit, task

from rocmforge.tasks._common import reported, settings_for

DOCTOR_SCHEMA = "rocmforge.doctor/1"


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

    from rocmforge.doctor import diagnose, exit_status, requested_targets
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.probes.facts import gather_facts, with_target_probes
    from rocmforge.render import emit_json, print_table

    settings = settings_for(c, arch=arch, rocm_path=rocm_path)
    table = load_arch_table()
    facts = gather_facts(settings, environ=os.environ)
    targets = requested_targets(settings.arch, facts.gpus.targets, table)
    facts = with_target_probes(facts, targets, environ=os.environ)
    rows = diagnose(facts, targets, settings, table=table)
    code = exit_status(rows)
    if json:
        emit_json(
            {
                "schema": DOCTOR_SCHEMA,
                "ok": code == 0,
                "targets": [str(t) for t in targets],
                "rocm": None
                if facts.rocm is None
                else {
                    "root": str(facts.rocm.root),
                    "version": facts.rocm.version,
                    "llvm_major": facts.rocm.llvm_major,
                },
                "rows": [r.to_json() for r in rows],
            }
        )
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
    import os
    import sys
    from types import SimpleNamespace

    from rocmforge.buildenv import FORMATS, build_environment, format_env
    from rocmforge.errors import ProbeError, UsageError
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.probes.compilers import find_host_compilers
    from rocmforge.probes.facts import choose_host_compiler
    from rocmforge.probes.gpus import find_gpus
    from rocmforge.probes.rocm import find_rocm_installs, select_rocm
    from rocmforge.probes.system import cpu_cores, memory_gib
    from rocmforge.targets import parse_targets

    if format not in FORMATS:
        raise UsageError(
            f"Unknown format {format!r}",
            "the environment can be printed for " + ", ".join(FORMATS),
            "pass --format sh (or fish, json, github)",
        )
    settings = settings_for(c, arch=arch, rocm_path=rocm_path, gcc=gcc, clang=clang)
    installs = find_rocm_installs(environ=os.environ, requested=settings.rocm_path)
    rocm = select_rocm(installs, settings.rocm_path, os.environ)
    arch_text = settings.arch
    if not arch_text:
        arch_text = ";".join(find_gpus(environ=os.environ).targets)
    # Not filtered by this ROCm's LLVM: env prints what was asked for; doctor judges it.
    targets = parse_targets(arch_text, load_arch_table()) if arch_text else ()
    cc = cxx = ""
    if settings.gcc or settings.clang:
        chosen = choose_host_compiler(
            find_host_compilers(os.environ.get("PATH", "")), gcc=settings.gcc, clang=settings.clang
        )
        if chosen is None or chosen.cxx is None:
            name = f"gcc-{settings.gcc}" if settings.gcc else f"clang-{settings.clang}"
            pkg = f"gcc-{settings.gcc} g++-{settings.gcc}" if settings.gcc else name
            raise ProbeError(
                f"{name} (with its C++ driver) is not on PATH",
                "CC/CXX must name a compiler that exists",
                f"sudo apt-get install {pkg}",
            )
        cc, cxx = str(chosen.cc), str(chosen.cxx)
    total, _ = memory_gib()
    # Only the facts env needs (no disk/cmake/triton probing), so it stays fast.
    facts = SimpleNamespace(
        rocm=rocm, rocm_problem="", system=SimpleNamespace(cores=cpu_cores(), mem_total_gib=total)
    )
    text = format_env(build_environment(settings, facts, targets, cc=cc, cxx=cxx), format)
    sys.stdout.write(text)


TASKS: tuple = (doctor, env)
COLLECTIONS: tuple = ()
