"""A source and its hipified copy both compiled into one link: the linkers' duplicate
definitions between <name> and <name>_hip (GNU ld, gold, lld).

Owns: that rule (moved out of link.py, at its 400-line limit, when it learned that two
different hipified files, a_hip and b_hip, are no twins). Must not: read files, run programs
or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.demangle import demangle
from rocmforge.triage.parsers.link import _LLD_DUPLICATE
from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _hip_duplicate(match: re.Match[str], view: LineView) -> Reading | None:
    if match.group("sym") is None and not any("defined at " in line for line in
                                              view.previous[-3:]):
        return None  # lld's first "defined at": the other definition is on a later line
    objects = re.findall(r"[\w+-]+\.o\b", view.text)
    here = objects[0] if objects else match.group("file") or "the other object"
    there = " ".join(view.previous[-4:]) + " " + view.text
    hips = {t.group(1): t for t in re.finditer(r"(\w+)_hip\.(?:cpp|cc|cu|o)\b", there)}
    twin = next((t for n, t in hips.items() if re.search(rf"(?<!\w){n}\.(?:cpp|cc|cu|o)\b",
                                                         there)), None if len(hips) > 1 else
                next(iter(hips.values()), None))  # a_hip and b_hip alone are no twins
    # lld names the symbol a few lines up ("duplicate symbol: <sym>", then ">>> defined at")
    sym = match.group("sym") or next((found.group(1) for line in reversed(view.previous[-4:])
                                      if (found := _LLD_DUPLICATE.search(line))), "")
    if twin is None or not sym:
        return None
    return Reading(subject=demangle(sym), cause=f"{twin.group(0)}, the hipified "
                   f"copy of {twin.group(1)}, was compiled beside it, so both define "
                   f"{demangle(sym)}: the extension's setup chose its CPU and GPU "
                   "sources at once (it saw no GPU, so it did not take the ROCm path alone)",
                   fix="force the GPU build where no GPU is visible (torchvision, torchaudio: "
                   "FORCE_CUDA=1 with PYTORCH_ROCM_ARCH set; the kit sets both for its "
                   f"companions) and rebuild from a clean build folder; {here} is the other copy")


RULES: tuple[Rule, ...] = (
    Rule(id="hipified-duplicate", klass="link", tier=0,  # its twin causes every duplicate
         triggers=("multiple definition of", "_hip.c"),
         pattern=rx(r"(?P<file>[\w.+-]+\.(?:cpp|cc|cu|o|h|hpp))(?::\S*)?: multiple definition "
                    r"of\s+[`'‘](?P<sym>[^'`’]+)['’]|^(?:>>>\s+)?defined at \w+_hip\.(?:cpp|cu)$"),
         read=_hip_duplicate, source="pytorch/vision#9298 (vision.cpp and vision_hip.cpp both "
         "compiled); gold's '<obj>: multiple definition of' and lld's 'duplicate symbol' with "
         "'>>> defined at <x>_hip.cpp': ld.gold 2.40 and ld.lld 22 here (make/devq8.sh)"),
)
