"""The kit's error values.

Owns: one base class whose message is a single paragraph (what happened, why, the fix) and the
exit code a task ends with: 0 proven, 1 a check or a build step failed (the input was fine), 2
bad input (nothing was changed), 3 the environment failed (the network, a disk, a tool that
crashed: the same command can work later or elsewhere), 130 interrupted. Must not: print,
exit, or import anything heavy; the task layer turns an error into output and an exit status
(see `rocmforge.tasks._common.reported`).
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

# The record `invoke vendor` writes into the copy's root (rocmforge.sessions.vendor): its presence
# means the tasks are reached as `invoke rocm.<task>` (the adapter adds the collection as `rocm`).
VENDOR_RECORD = ".rocmforge-vendor.json"
_TASK_IN_COMMAND = re.compile(r"`invoke((?: --?[a-z][a-z-]*)*) (?!rocm\.)([a-z][a-z0-9_]*(?:\.[a-z]"
                              r"[a-z0-9_-]*)?)")


# Set by `rocmforge.tasks.mount` (a tasks.py that adds the installed kit as `rocm`) and by the
# nox sessions of a vendored copy for the `rocmforge` program they run: "rocm." or "".
TASK_PREFIX_ENV = "ROCMFORGE_TASK_PREFIX"


def is_vendored() -> bool:
    """True when the user reaches the kit's tasks as `invoke rocm.<task>`: ROCMFORGE_TASK_PREFIX
    says so (a tasks.py that mounted the kit, a nox session of a vendored copy), or this copy
    was vendored into another repository whose tasks.py adds it as the `rocm` collection (the
    record says `"task_prefix": "rocm."`)."""
    given = os.environ.get(TASK_PREFIX_ENV)
    if given is not None:
        return given == "rocm."
    return _recorded_vendored()


@functools.cache
def _recorded_vendored() -> bool:
    import json

    try:
        record = json.loads((Path(__file__).resolve().parents[1] / VENDOR_RECORD).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and record.get("task_prefix", "rocm.") == "rocm."


# The kit's task names (integration/test_vendor.py checks them against Invoke's list): a
# command outside backticks ("then: invoke doctor --arch gfx1100") is rewritten only for these,
# so prose that says "invoke" is left alone.
KIT_TASKS = ("build", "checkout", "clean", "doctor", "env", "fetch", "inspect", "install",
             "knowledge", "matrix", "patch", "plan", "toolchain", "triage", "vendor", "verify",
             "triton.checkout", "triton.pin")
_BARE_TASK = re.compile(r"(?<![\w`./-])invoke((?: --?[a-z][a-z-]*)*) (?!rocm\.)("
                        + "|".join(re.escape(t) for t in sorted(KIT_TASKS, key=len, reverse=True))
                        + r")(?![\w.-])")


def task_names(text: str, *, vendored: bool | None = None) -> str:
    """`invoke build` in a message as the user must type it: `invoke rocm.build` in a repository
    that vendored the kit (any command in backticks, and a bare `invoke <kit task>`)."""
    if not (is_vendored() if vendored is None else vendored):
        return text
    text = _TASK_IN_COMMAND.sub(lambda m: f"`invoke{m.group(1)} rocm.{m.group(2)}", text)
    return _BARE_TASK.sub(lambda m: f"invoke{m.group(1)} rocm.{m.group(2)}", text)


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
        return task_names(" ".join(parts))


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


# The exit statuses, by meaning (README "Exit codes"; integration/test_exit_codes.py runs each).
EXIT_CHECK_FAILED = StepFailed.exit_code
EXIT_BAD_INPUT = RocmforgeError.exit_code
EXIT_ENVIRONMENT = 3


class EnvironmentFailed(RocmforgeError):
    """The machine's surroundings failed, not the input: a fetch over the network, a full disk,
    a tool that crashed. Exit 3: the same command can work again later or elsewhere."""

    exit_code = EXIT_ENVIRONMENT

    def in_step(self, log: str, resume: str, step: str = "") -> EnvironmentFailed:
        """The same error, as a build step's: the step, its log and how to resume are added to
        the fix (the steps already done are stamped, so re-running the command skips them)."""
        which = (f"step {step} stopped and no stamp was written for it; its log is {log}"
                 if step else f"the step's log is {log}")
        step_fix = (f"{which}; once that is fixed, {resume} (the steps already "
                    "done are stamped and are not run again)")
        import copy

        made = copy.copy(self)
        made.fix = f"{self.fix}; {step_fix}" if self.fix else step_fix
        made.args = (made.paragraph(),)
        return made


# Names that are spelled in lower case even at the start of a sentence.
_LOWERCASE_NAMES = frozenset(
    {"rocmforge", "invoke", "nox", "pip", "git", "hipcc", "clang", "cmake", "ninja", "torch",
     "triton", "amdclang", "gcc", "rocminfo", "setuptools", "ccache", "sccache", "rocm"}
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


# errno values that mean "the disk refused the write": no space, a quota, a file size limit.
class DiskFull(EnvironmentFailed):
    """A write the disk refused (no space, a quota, a file size limit): one message and exit 3
    wherever it happens (a download, an unpack, the lock, a stamp)."""


def disk_full(exc: OSError, where: object, *, path: object = None) -> DiskFull | None:
    """The DiskFull for `exc` when it is the disk refusing a write of `path` (default: the
    file the error names) in the folder `where`, else None."""
    import errno

    if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return None
    return disk_refused(path or exc.filename or where, exc.strerror or str(exc), where)


def disk_refused(target: object, reason: str, where: object,
                 kept: str = "nothing half-written was kept") -> DiskFull:
    """The one message of a write the disk refused (README "Exit codes": exit 3), wherever it
    happens: in the kit (`disk_full`) or in a build step's own process (the step's log)."""
    return DiskFull(
        f"The disk refused a write to {target}: {reason}",
        "the file system is full, over a quota, or the file is above a size limit "
        f"(ulimit -f); {kept}",
        f"free space there (`df -h {where}`), then run the same command again",
    )
