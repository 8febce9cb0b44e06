"""Memory running out: a compiler or linker SIGKILLed by the out-of-memory killer, an
allocator that failed, exit code 137, and a GPU memory fraction set too high.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import NOT_SHELL_TRACE, Alias, Groups, LineView, Reading, Rule, rx

_JOBS_FIX = ("{jobs_advice}; a PyTorch ROCm build needs about 4-5 GB of RAM per compile job, "
             "and the rerun resumes where it stopped")


def _killed(match: Groups, view: LineView) -> Reading | None:
    prog = match.groupdict().get("prog") or "the compiler"
    prog = prog.rsplit("/", 1)[-1]
    # a cross toolchain's linker carries its target triple (x86_64-linux-gnu-ld.gold)
    linker = re.match(r"(?:[\w.]+-)*(?:ld|lld|collect2)\b", prog)
    role = "the linker" if linker else "the compiler"
    who = role if prog == "the compiler" else f"{role} ({prog})"
    fix = _JOBS_FIX
    if role == "the linker":
        fix += ("; one link of a large shared library needs the most memory at once: run one "
                "link at a time (LLVM_PARALLEL_LINK_JOBS=1 or a ninja link pool), add swap, or "
                "link with lld, which needs less memory than GNU ld")
    return Reading(subject=prog, cause=f"{who} was killed by the kernel (SIGKILL), almost "
                   "always the out-of-memory killer: too many parallel jobs for this machine's "
                   "memory", fix=fix)


def _out_of_memory(match: re.Match[str], view: LineView) -> Reading | None:
    prog = (match.groupdict().get("prog") or "").rsplit("/", 1)[-1] or "memory"
    return Reading(subject=prog, cause=f"{'the compiler' if prog == 'memory' else prog} ran "
                   "out of memory (an allocation failed): too many parallel jobs for the memory, "
                   "or a memory limit (ulimit -v, a container limit)",
                   fix=_JOBS_FIX + "; raise the limit if one is set (`ulimit -v`, docker --memory)")


def _exit_137(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(subject="memory", cause="a build process ended with status 137 (128 + "
                   "SIGKILL 9): the out-of-memory killer, or a container's memory limit",
                   fix=_JOBS_FIX)


def _oom_kernel(match: Groups, view: LineView) -> Reading | None:
    task = match.groupdict().get("task") or ""
    return Reading(subject="memory", cause="the kernel's out-of-memory killer ended a process "
                   f"{'(' + task + ') ' if task else ''}of the build: its memory (or the "
                   "container's or job's memory limit) ran out", fix="{jobs_advice}; a "
                   "PyTorch ROCm build needs about 4-5 GB of RAM per compile job, and a job "
                   "scheduler's memory limit (slurm, docker --memory) counts all of them")


def _killed_any(match: re.Match[str], view: LineView) -> Reading | None:
    if match.group("prog5"):
        # collect2 and lto-wrapper name the program they ran (a path for lto-wrapper's
        # driver): only a compiler or linker's SIGKILL is read as the OOM killer's
        if not _BUILD_PROGRAM.match(match.group("prog5").rsplit("/", 1)[-1]):
            return None
        return _killed(Alias(match, prog="prog5"), view)
    for group in ("prog2", "prog4"):
        if match.group(group):
            return _killed(Alias(match, prog=group), view)
    if match.group(0).strip() == "Killed" and view.previous and \
            _INTERPRETER.match(view.previous[-1]):
        return None  # make's echo of a python recipe, then its SIGKILL (make/rv11.sh): no compiler
    return _killed(Alias(match, prog="prog3"), view)


# A command line that runs a script's interpreter, as make echoes a recipe before running it.
_INTERPRETER = re.compile(r"^(?:[$+]+ )?(?:\S*/)?(?:python[\d.]*|perl|node|ruby|java|bash|sh)\s")


# Programs of a build whose SIGKILL is the out-of-memory killer's in practice (compilers,
# linkers, the LLVM tools a HIP device link runs).
_BUILD_PROGRAM = re.compile(
    r"^(?:[\w.]+-)*(?:cc1plus|cc1|c\+\+|g\+\+(?:-\d+)?|gcc(?:-\d+)?|"
    r"clang(?:\+\+)?(?:-\d+)?|amdclang\+\+|hipcc(?:\.pl)?|nvcc|ld(?:\.\w+)?|lld|collect2|llvm-link|llc|opt|lto1|ninja)(?:\.exe)?$")


def _shell_killed(match: re.Match[str], view: LineView) -> Reading | None:
    program = match.group("cmd").strip("'\"").rsplit("/", 1)[-1]
    if not _BUILD_PROGRAM.match(program):
        return None  # a job of unknown kind: SIGKILL alone does not prove memory ran out
    return Reading(
        subject=program,
        cause=f"the shell reports {program} was killed (SIGKILL), almost always the "
              "out-of-memory killer: too many parallel jobs for this machine's memory",
        fix=_JOBS_FIX)


def _spawn_killed(match: re.Match[str], view: LineView) -> Reading | None:
    program = (match.group("cmd") or match.group("cmd2")).replace("\\", "/").rsplit("/", 1)[-1]
    if not _BUILD_PROGRAM.match(program):
        return None  # a script or tool killed: SIGKILL alone does not prove memory ran out
    return Reading(
        subject=program,
        cause=f"the build's Python ran {program}, and it ended by signal 9 (SIGKILL), "
              "almost always the out-of-memory killer: too many parallel compile jobs for "
              "this machine's memory",
        fix=_JOBS_FIX)


def _make_killed(match: re.Match[str], view: LineView) -> Reading | None:
    target = match.group("target").rsplit("/", 1)[-1]
    linked = re.search(r"\.(?:so[\d.]*|a|dll|exe)$|^lib[^.]+$", target) is not None
    who = "the linker" if linked else "the compiler"
    fix = _JOBS_FIX
    if linked:
        fix += "; a link of a large shared library needs the most memory at once: run one link "\
               "at a time, add swap, or link with lld"
    return Reading(
        subject="memory",
        cause=f"make reports the recipe building {target} was killed (SIGKILL): {who} was "
              "ended by the out-of-memory killer, too many parallel jobs for this machine's "
              "memory",
        fix=fix)


_MSVC_OOM = {"C1060": "MSVC's compiler front end (c1xx)", "C1002": "MSVC's compiler back "
             "end (c2, pass 2)", "C1076": "MSVC's compiler (its internal heap limit)",
             "LNK1102": "MSVC's linker (link.exe)"}


def _heap_exhausted(match: Groups, view: LineView) -> Reading | None:
    code = match.group("code") or ""
    who = _MSVC_OOM.get(code, "the compiler front end")
    msvc = code in _MSVC_OOM
    return Reading(
        subject="memory",
        cause=f"{who} ran out of {'heap space (memory, ' + code + ')' if msvc else 'memory'}"
              ": too many parallel "
              "jobs for the machine's memory" + (", or the 32-bit hosted MSVC tools (4 GB "
              "address space)" if msvc else ""),
        fix="{jobs_advice}" + (
            ", and build with the 64-bit hosted tools (an x64 Native Tools prompt, Hostx64\\x64 "
            "compiler, CMake -T host=x64 or PreferredToolArchitecture=x64)" if msvc else ""))


def _memory_fraction(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="set_per_process_memory_fraction",
        cause=f"the GPU allocation failed against a per-process cap ({match.group('cap')} "
              "allowed), not against the GPU's free memory: torch prints 'allowed' only when "
              "a memory fraction is set (torch.cuda.set_per_process_memory_fraction), by the "
              "program or left set by earlier code in the same process",
        fix="raise or reset the cap (torch.cuda.set_per_process_memory_fraction(1.0) after the "
            "code that lowered it), or find what set the memory_fraction; in a test suite, "
            "the test that sets it must restore it")


_UNITS = {"B": 1, "bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40,
          "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}


def _bytes(size: str) -> float:
    """'3.31 GiB' -> bytes (the allocator prints binary units, and 'N bytes' up to 1 KiB)."""
    number, unit = size.split()
    return float(number) * _UNITS.get(unit, 1)


# torch's format_size: "0 bytes" up to 1 KiB, then KiB, MiB, GiB.
_SIZE = r"[\d.]+ (?:[KMGT]?i?B|bytes)"


def _gpu_out_of_memory(match: Groups, view: LineView) -> Reading | None:
    if " allowed;" in view.text:
        return None  # a per-process cap, not the GPU's memory: gpu-memory-fraction reads it
    free, total = match.group("free"), match.group("total")
    setting = re.search(r"(?P<var>PYTORCH_\w*ALLOC_CONF)=(?P<val>[\w:.,]+)", view.text)
    knob = (f"{setting.group('var')}={setting.group('val')} (the allocator's own hint, "
            "against fragmentation)" if setting
            else "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True")
    held = re.search(r"Of the allocated memory (?P<held>[\d.]+ [KMGT]?i?B) is allocated by "
                     r"PyTorch", view.text)
    size = match.group("size")
    fix = (f"lower the workload's memory (smaller batch, resolution or model, offloading), "
           f"free what the process holds (torch.cuda.empty_cache() between jobs), or set "
           f"{knob}; the GPU and ROCm install are not at fault")
    if _bytes(size) > _bytes(total):
        why = (f"more than the {total} the HIP runtime reports for the whole GPU (an APU sees "
               "only its VRAM carve-out and what the driver lets it map)")
        # One request bigger than the whole GPU: no allocator setting helps; on an APU the
        # capacity is a setting of the machine (its VRAM/GTT split), not of the workload.
        fix = (f"a single {size} tensor cannot fit a GPU of {total}: split the work or use a "
               "smaller model or batch; on an APU (memory shared with the CPU) the capacity is "
               "the machine's VRAM/GTT split: compare it with the VRAM the kernel reports "
               "(`sudo dmesg | grep -i 'memory ready'`) and change the BIOS VRAM carve-out or "
               "the GTT limit (the amdgpu.gttsize / ttm.pages_limit kernel parameters) so the "
               "pool the runtime uses covers it")
    else:
        why = f"with {free} free of {total}" + (
            f"; PyTorch holds {held.group('held')} of it in this process" if held else "")
    return Reading(
        subject="memory",
        cause=f"the GPU ran out of memory at run time: PyTorch asked for {size} on GPU "
              f"{match.group('gpu')}, {why}",
        fix=fix)


_TENSILE_WORK = re.compile(r"\bTensile\b|ParallelMap|[Ll]ogic files|TensileCreateLibrary")


def _python_enomem(match: re.Match[str], view: LineView) -> Reading | None:
    tensile = any(_TENSILE_WORK.search(line) for line in (*view.previous, view.text))
    what = ("Tensile's library build (it reads and processes the kernel logic files of "
            "every GPU target in parallel worker processes)" if tensile else
            "a Python step of the build")
    return Reading(
        subject="memory",
        cause=f"{what} ran out of host memory: an allocation or a new worker process failed "
              "with ENOMEM ([Errno 12] Cannot allocate memory), the machine's RAM (or a "
              "container's or job's memory limit) was used up",
        fix=("build for fewer GPU targets, only the ones you need (GPU_TARGETS / "
             "AMDGPU_TARGETS, or PYTORCH_ROCM_ARCH: each target adds its logic files), and "
             "with fewer parallel jobs; " if tensile else "")
        + "{jobs_advice}; more memory or swap helps too")


RULES: tuple[Rule, ...] = (
    Rule(id="compiler-killed", klass="out-of-memory", tier=0,
         triggers=("Killed", "killed"),
         pattern=rx(r"Killed(?:: 9)? signal terminated program (?P<prog>\S+)"
                     r"|internal compiler error: Killed(?:: 9)? \(program (?P<prog4>\S+)\)"
                     r"|(?P<prog2>clang\S*|ld\S*|\S*hipcc): error: unable to execute command: "
                     r"Killed"
                     r"|terminated by signal 9 \(Killed\)|^Killed\s*$|: Killed$"
                     r"|(?:collect2|lto-wrapper|[\w.+-]+): (?:fatal )?error: (?P<prog5>\S+) "
                     r"terminated with signal 9 \[Killed\]"
                     r"|(?:\bprocess|\bjob)\S* (?:was )?killed by (?:the )?(?:OOM|oom)"
                     r"|(?:(?P<prog3>cc1plus|cc1|clang[\w.+-]*|ld(?:\.\w+)?|lld|hipcc|[gc]\+\+)"
                     r"\S*:? (?:was |got )?|\b(?:was|got) )killed by the kernel"),
         read=_killed_any,
         source="gcc/clang driver text for a SIGKILLed child; GCC's collect-utils.c/collect2.c/"
         "lto-wrapper.c collect_wait (\"%s terminated with signal %d [%s]%s\", the program as "
         "run, a full path for lto-wrapper's, \", core dumped\" after); macOS/BSD strsignal's "
         "\"Killed: 9\" (synthetos/g2#70); pytorch/pytorch#124018"),
    Rule(id="out-of-memory", klass="out-of-memory", tier=0,
         triggers=("memory exhausted", "out of memory", "Out of memory", "bad_alloc",
                   "Cannot allocate memory"),
         pattern=rx(r"(?P<prog>cc1plus|cc1|ld|clang\S*)?:? ?(?:virtual memory exhausted"
                     r"|out of memory allocating|fatal error: out of memory)"
                     r"|LLVM ERROR: out of memory|std::bad_alloc.*(?:clang|cc1plus|ld)"
                     r"|virtual memory exhausted: Cannot allocate memory"),
         read=_out_of_memory, source="gcc's xmalloc_failed text, LLVM's report_bad_alloc_error"),
    Rule(id="python-enomem", klass="out-of-memory", tier=0,
         triggers=("[Errno 12] Cannot allocate memory",),
         pattern=rx(r"^(?:OSError|BlockingIOError|\w*Error): \[Errno 12\] Cannot allocate "
                    r"memory"),
         steps=("build", "configure", "triton"),
         read=_python_enomem,
         source="glibc strerror(ENOMEM) as Python's OSError prints it ('[Errno 12] Cannot "
         "allocate memory'); ROCm/rocm-libraries#5978 (Tensile's ParallelMap over the logic "
         "files of every target)"),
    Rule(id="exit-137", klass="out-of-memory", tier=0,
         triggers=("137",),
         pattern=rx(r"exit (?:code|status):? 137\b|exit status 137\b|returned non-zero exit "
                     r"status 137|Error 137\b|exited with code 137|code=137\b"),
         read=_exit_137, source="128 + SIGKILL; docker/kubernetes OOMKilled"),
    Rule(id="oom-killer", klass="out-of-memory", tier=0,
         triggers=("oom-kill", "Out of memory: Killed process", "invoked oom-killer"),
         pattern=rx(r"oom-kill:constraint=\S*?(?:task=(?P<task>[\w.+-]+))?"
                     r"|Out of memory: Killed process \d+ \((?P<task2>[^)]+)\)|invoked oom-killer"),
         read=lambda m, v: _oom_kernel(Alias(m, task="task2"), v),
         source="Linux mm/oom_kill.c messages (dmesg); pytorch/pytorch#124018"),
    Rule(id="shell-killed", klass="out-of-memory", tier=0,
         triggers=(" Killed ",),
         pattern=rx(r"(?:^|: )(?:line \d+: )?\d+ Killed\s+(?:\S+=\S+\s+)*(?P<cmd>\S+)"),
         read=_shell_killed, source="bash/dash job report for a SIGKILLed command "
         "(\"<pid> Killed <command>\"); ROCm/AMDMIGraphX#419"),
    Rule(id="spawn-killed", klass="out-of-memory", tier=0,
         triggers=("failed with exit code -9", "died with <Signals.SIGKILL: 9>"),
         pattern=rx(r"command '(?P<cmd>[^']+)' failed with exit code -9\b"
                     r"|Command '\[(?P<q>['\"])(?P<cmd2>[^'\"]+)(?P=q).*' died with "
                     r"<Signals\.SIGKILL: 9>"),
         read=_spawn_killed, source="pypa/distutils@1261c36a099e876c62f37b7afec6c8440e1fd72f:"
         "distutils/spawn.py (DistutilsExecError \"command {cmd!r} failed with exit code "
         "{exitcode}\": a child killed by signal N has return code -N); CPython 3.11's "
         "subprocess.py CalledProcessError.__str__ (\"Command '%s' died with %r.\"), which "
         "setuptools 84's build_ext prints for a SIGKILLed compiler here (make/spawn_killed.sh)"),
    Rule(id="make-killed", klass="out-of-memory", tier=0,
         triggers=("] Killed",),
         pattern=rx(r"\*\*\* \[(?:[^\]]*?: )?(?P<target>[^\]\s:]+\.(?:o|obj|so[\d.]*|a|dll|exe)"
                     r")\] Killed$"),
         read=_make_killed, source="GNU make job.c child_error (\"%s[%s: %s] %s%s%s\": "
         "'*** [<makefile>:<line>: <target>] Killed', older makes '*** [<target>] Killed'): "
         "a build output's recipe (an object, a library) only; another target's SIGKILL proves "
         "no memory ran out; retrofw/retrofw.github.io#32 shows the form, localized)"),
    Rule(id="compiler-heap-exhausted", klass="out-of-memory", tier=0,
         triggers=("C1060", "C1002", "C1076", "LNK1102", "catastrophic error: out of memory"),
         pattern=rx(r"fatal error (?P<code>C1060|C1002|C1076):"
                     r"|fatal error (?P<code2>LNK1102):"
                     r"|catastrophic error: out of memory"),
         read=lambda m, v: _heap_exhausted(Alias(m, code="code2"), v),
         source="MSVC fatal errors C1060/C1002/C1076 and LNK1102 (read by code: the text is in "
         "the UI language), the EDG "
         "front end's 'catastrophic error: out of memory'; apache/mxnet#17867, "
         "sdslabs/Rootex#546, pytorch/pytorch#27215, #66674"),
    Rule(id="gpu-memory-fraction", klass="out-of-memory",
         triggers=(" allowed;",),
         pattern=rx(r"out of memory\. Tried to allocate .*? (?P<cap>[\d.]+ [KMGT]?i?B) "
                     r"allowed;"),
         read=_memory_fraction, source="pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (the "
         "OOM message adds '<size> allowed; ' only when set_fraction; commit not read); "
         "ROCm/TheRock#2118"),
    Rule(id="gpu-out-of-memory", klass="out-of-memory",
         triggers=("HIP out of memory",),
         pattern=rx(NOT_SHELL_TRACE + r"(?:HIP out of memory\. Tried to allocate (?P<size>"
                     + _SIZE + r")\. GPU (?P<gpu>\d+) has a total capacity of (?P<total>"
                     + _SIZE + r") of which (?P<free>" + _SIZE + r") is free"
                     # torch before 2.1: "(GPU 0; 7.98 GiB total capacity; 7.80 GiB already
                     # allocated; 0 bytes free; …)"
                     r"|HIP out of memory\. Tried to allocate (?P<size2>" + _SIZE + r") \(GPU "
                     r"(?P<gpu2>\d+); (?P<total2>" + _SIZE + r") total capacity; [^;]* already "
                     r"allocated; (?P<free2>" + _SIZE + r") free)"),
         read=lambda m, v: _gpu_out_of_memory(
             Alias(m, size="size2", gpu="gpu2", total="total2", free="free2"), v),
         source="pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (the "
         "OOM message, hipified to 'HIP out of memory', both its forms; format_size prints "
         "'N bytes' up to 1 KiB (stored copies, commit not read)); "
         "kyuz0/amd-strix-halo-image-video-toolboxes#3, ROCm/TheRock#1054"),
)
