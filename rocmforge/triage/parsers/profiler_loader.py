"""ROCm's tracing and profiling libraries at run time: a library they dlopen() by its bare
name that the dynamic loader does not find, after which they abort.

Owns: the rules that read the library out of those tools' own loader messages. Must not: hold
the dynamic loader's own messages (loader.py) or a library's missing file at build time.
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _roctracer_load(match: re.Match[str], view: LineView) -> Reading | None:
    lib, why = match.group("lib"), match.group("why").strip(" *`")
    # Only a library the loader did not find: a symbol or ELF-class error is another cause.
    if why not in ("", "(null)") and "cannot open shared object file" not in why:
        return None
    return Reading(
        subject=lib,
        cause=f"roctracer dlopen()s {lib} by its bare name when tracing starts and aborts "
              "when that fails: the library is installed in a folder of the ROCm install "
              "that is not on the dynamic loader's search path (roctracer's own lib folder "
              "in older ROCm layouts), or not installed at all",
        fix=f"add the folder that holds {lib} to LD_LIBRARY_PATH (`find /opt/rocm* -name "
            f"'{lib}*'` shows it; e.g. export LD_LIBRARY_PATH=/opt/rocm/roctracer/lib:"
            "$LD_LIBRARY_PATH), or install the roctracer package that ships it; then run again")


RULES: tuple[Rule, ...] = (
    Rule(id="roctracer-load-failed", klass="import",
         triggers=("roctracer: Loading '",),
         pattern=rx(r"roctracer: Loading '(?P<lib>[\w.+-]+\.so[\w.]*)' failed,(?P<why>.*)$"),
         read=_roctracer_load, source="ROCm/rocm-systems@7ea1dbafd29c699c527dfcf36b76eac18b16ea"
         "ca:projects/roctracer/src/roctracer/loader.h (BaseLoader: dlopen(lib_name_); on NULL "
         "fprintf(stderr, \"roctracer: Loading '%s' failed, %s\\n\", lib_name_, dlerror()) "
         "then abort(); removed by fe526e0c3, Sep 2022); ROCm/roctracer#41"),
)
