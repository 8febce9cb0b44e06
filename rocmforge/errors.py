"""The kit's error values.

Owns: one base class whose message is a single paragraph (what happened, why, the fix) and the
exit code a task ends with. Must not: print, exit, or import anything heavy; the task layer turns
an error into output and an exit status (see `rocmforge.tasks._common.reported`).
"""

from __future__ import annotations


class RocmforgeError(Exception):
    """A failure a user can act on. Exit status 2 means: bad input, nothing was changed."""

    exit_code = 2

    def __init__(self, what: str, why: str = "", fix: str = "") -> None:
        self.what = what.strip()
        self.why = why.strip()
        self.fix = fix.strip()
        super().__init__(self.paragraph())

    def paragraph(self) -> str:
        parts = [_sentence(self.what, capitalise=False)]
        if self.why:
            parts.append(_sentence(self.why))
        if self.fix:
            parts.append("Fix: " + _sentence(self.fix, capitalise=False))
        return " ".join(parts)


class UsageError(RocmforgeError):
    """A flag, setting or environment variable has a value the kit cannot use."""


class ConfigError(RocmforgeError):
    """A file under config/ (or a user override) is malformed or names an unknown key."""


class TargetError(UsageError):
    """A GPU target string that is not a target this kit (or this toolchain) can build for."""


class ProbeError(RocmforgeError):
    """The machine does not look like the settings say (e.g. --rocm-path is not ROCm)."""


class StepFailed(RocmforgeError):
    """A build step ran and failed; its triage is in the message. Exit 1: the input was fine."""

    exit_code = 1


# Names that are spelled in lower case even at the start of a sentence.
_LOWERCASE_NAMES = frozenset(
    {"rocmforge", "invoke", "nox", "pip", "git", "hipcc", "clang", "cmake", "ninja", "torch",
     "triton", "amdclang", "gcc", "rocminfo", "setuptools", "ccache", "sccache"}
)


def _sentence(text: str, *, capitalise: bool = True) -> str:
    """One sentence with a closing full stop; a leading plain word gets a capital letter.

    Names of targets, files and commands (gfx942, torch-2.9.whl, invoke) keep their spelling,
    so only the reason sentence is capitalised, and only when it starts with an ordinary word.
    """
    text = text.strip()
    first = text.split(" ", 1)[0]
    if capitalise and first.isalpha() and first.islower() and first not in _LOWERCASE_NAMES:
        text = text[0].upper() + text[1:]
    if text and text[-1] not in ".!?:":
        text += "."
    return text
