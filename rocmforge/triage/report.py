"""How a Diagnosis reads on a terminal: a few labelled paragraphs and the evidence lines.

Owns: the text form of `invoke triage` (wrapped to the terminal, never cropped: long log lines
are printed whole and left to the terminal to wrap) and the kit's step names `--step` accepts.
Must not: decide anything about the log.
"""

from __future__ import annotations

from rocmforge.knowledge import steps as registry
from rocmforge.render import wrap_whole
from rocmforge.triage.model import Diagnosis

# The kit's step names, from knowledge.steps (verify: an import or a first op after install);
# an add-on's steps are `<add-on>-checkout/-pairing/-patches/-prepare-<n>/-build`.
STEPS: tuple[str, ...] = tuple(spec.name for spec in registry.STEPS)


def known_step(step: str) -> bool:
    return not step or registry.is_known(step)


def render_text(found: Diagnosis, source: str, width: int = 80) -> str:
    """The answer as a person reads it; `source` names the log (a path or 'stdin')."""
    width = max(40, width)
    out: list[str] = []

    def para(label: str, text: str) -> None:
        # Words whole, and a command (in backticks or not) never split across lines.
        out.append("\n".join(wrap_whole(text, width, initial_indent=f"{label:<8}",
                                         subsequent_indent=" " * 8)))

    if found.explained:
        para("class", f"{found.klass} ({found.subject})" if found.subject else str(found.klass))
        para("cause", found.cause)
        para("fix", found.fix)
        para("rule", f"{found.rule}" + (f" (from {found.source})" if found.source else ""))
        if found.alternatives:
            para("also", "; ".join(f"{a.klass} ({a.subject}, line {a.evidence.lineno})"
                                   for a in found.alternatives)
                 + ": weaker readings of this log, see --json")
        heading = f"the lines it rests on ({source}):"
    else:
        para("class", "none: no known failure explains this log, so no cause is claimed")
        heading = (f"the lines of {source} that look like errors:" if found.evidence else
                   f"{source} has no line that looks like an error")
    out.append("")
    out.extend(wrap_whole(heading, width))  # a long path goes whole onto its own line
    for line in found.evidence:
        out.append(f"  {line.lineno:>6}: {line.text}")
    return "\n".join(out) + "\n"
