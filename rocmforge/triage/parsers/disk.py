"""A full disk or an exceeded quota or file-size limit, from any tool that reports it.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

from rocmforge.triage.rule import Rule

# Every message of this family so far has a fixed answer (config/diagnostics.toml).
RULES: tuple[Rule, ...] = ()
