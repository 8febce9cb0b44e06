"""Shared-library links: code compiled without -fPIC that the linker cannot put into a
shared library (GNU ld, gold, lld; an archive member or an object file), version scripts
that name symbols the library's objects no longer define (lld's --no-undefined-version), and
relocations that overflow in a library or program grown past 2 GiB, a symbol taken from a
shared library that is only an indirect dependency (GNU ld's "DSO missing from command line"),
and a library's own dependency ld could not find ("needed by ..., not found").

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under the link family's heading. Must not: read files, run programs
or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _not_pic_reading(owner: str, reloc: str) -> Reading:
    """The archive (or object) whose code is position-dependent, by its file stem."""
    name = re.split(r"[\\/]", owner)[-1]
    stem = re.sub(r"\.(?:a|lib|o|obj)$", "", name)
    return Reading(
        subject=stem,
        cause=f"{owner} holds code compiled without -fPIC ({reloc} is a position-dependent "
              "relocation), and the linker cannot put it into a shared library: a static "
              "library built for executables only",
        fix=f"rebuild {stem} with position-independent code (-fPIC; CMake: "
            "CMAKE_POSITION_INDEPENDENT_CODE=ON, or the project's shared/PIC option) and link "
            "again, or link its shared library (.so) instead of the archive")


# lines.clean drops lld's ">>> " prefix: the lines read "referenced by …" and "<obj>:(…) in
# archive <ar>".
_IN_ARCHIVE = re.compile(r"^(?:>>>\s+)?\S+:\(.*\) in archive (?P<ar>\S+)\s*$")


def _not_pic(match: re.Match[str], view: LineView) -> Reading | None:
    owner = match.group("arch") or match.group("obj") or ""
    return _not_pic_reading(owner, match.group("reloc")) if owner else None


def _lld_pic_head(view: LineView) -> re.Match[str] | None:
    """lld's "relocation R_… cannot be used against …; recompile with -fPIC" a few lines
    above, with its ">>> referenced by" line right before this one; None when either is not
    there."""
    head = next((re.search(r"relocation (?P<reloc>R_\w+) cannot be used against", line)
                 for line in reversed(view.previous[-6:]) if "recompile with -fPIC" in line),
                None)
    if head is None or not any(line.lstrip("> ").startswith("referenced by")
                               for line in view.previous[-3:]):
        return None
    return head


def _not_pic_lld(match: re.Match[str], view: LineView) -> Reading | None:
    # lld names the referencing object after the error: ">>> referenced by <src>" then
    # ">>>  <obj>:(<func>) in archive <ar>".
    head = _lld_pic_head(view)
    if head is None:
        return None
    return _not_pic_reading(match.group("ar"), head.group("reloc"))


# The link's output and its version script, as the command line above the error names them.
_LINK_OUTPUT = re.compile(r"(?:^|\s)-o\s+(?P<out>\S+?\.so(?:\.[\d.]+)?)(?:\s|$)")
_VERSION_SCRIPT = re.compile(r"--version-script[=,](?P<script>\S+)")


def _library_stem(path: str) -> str:
    """libamdhip64.so.6.0.32830 -> libamdhip64."""
    return re.sub(r"\.so(?:\.[\d.]+)?$", "", re.split(r"[\\/]", path)[-1])


def _stale_version_script(match: re.Match[str], view: LineView) -> Reading | None:
    out = script = ""
    for line in reversed(view.previous):
        out = out or next((m.group("out") for m in _LINK_OUTPUT.finditer(line)), "")
        script = script or next((m.group("script") for m in _VERSION_SCRIPT.finditer(line)), "")
    symbol, node = match.group("sym"), match.group("node")
    library = _library_stem(out) if out else symbol
    named = f" ({script.rsplit('/', 1)[-1]})" if script else ""
    return Reading(
        subject=library,
        cause=f"the version script{named} assigns {node} to {symbol}, which the objects "
              f"of {library if out else 'the link'} do not define (symbol not defined): a "
              "stale entry, and ld.lld since LLVM 16 defaults to --no-undefined-version, "
              "which makes each such entry an error",
        fix=f"remove the entries for symbols the library no longer defines from its version "
            f"script{named} (a newer release of the project may already have), or link with "
            "-Wl,--undefined-version (LDFLAGS) to make them warnings again")


def _not_pic_object(match: re.Match[str], view: LineView) -> Reading | None:
    # lld: "relocation R_… cannot be used against …; recompile with -fPIC", ">>> defined in
    # <obj>", ">>> referenced by <src>", ">>>  <obj>:(<func>)" (no archive: an object file).
    head = _lld_pic_head(view)
    if head is None:
        return None
    obj = match.group("obj")
    out = next((m.group("out") for line in reversed(view.previous)
                for m in _LINK_OUTPUT.finditer(line)), "")
    if not out:
        return _not_pic_reading(obj, head.group("reloc"))
    library = out.rsplit("/", 1)[-1]
    return Reading(
        subject=library,
        cause=f"{obj}, linked into the shared library {library}, was compiled without "
              f"-fPIC ({head.group('reloc')} is a position-dependent relocation), and the "
              "linker cannot put it into a shared library",
        fix="compile that object with position-independent code (-fPIC; CMake: "
            "CMAKE_POSITION_INDEPENDENT_CODE=ON or the target's POSITION_INDEPENDENT_CODE, "
            "which HIP objects need too) and link again")


def _relocation_overflow(match: re.Match[str], view: LineView) -> Reading | None:
    named = match.group("what") or ""
    owner = _RELOC_OWNER.search(view.text)
    target = _CMAKE_TARGET.search(" ".join((*view.previous[-1:], view.text)))
    project = _RELOC_PROJECT.get(owner.group(1), owner.group(1)) if owner else ""
    subject = (named.split(".so")[0] or project
               or (target.group(1) if target else "") or "libtorch_hip")
    linked = (f"the target {target.group(1)}" if target else
              "the library being linked, usually libtorch_hip.so")
    return Reading(
        subject=subject,
        cause="a relocation overflowed while linking (R_X86_64 offsets are limited to ±2 GiB): "
              f"{linked}, with device code for many targets (or unoptimized, in a Debug "
              "build), grew past 2 GiB",
        fix="build for fewer GPU targets, each arch adds its device code (`invoke build --arch "
            "<your gfx>`, PYTORCH_ROCM_ARCH; "
            "a project's own list, e.g. AOTriton's or Composable Kernel's GPU_TARGETS"
            + (f", or build {target.group(1)} alone for the targets you need" if target else "")
            + "), build with CMAKE_BUILD_TYPE=Release rather than Debug, or link with "
            "-mcmodel=medium / compressed offload bundles (--offload-compress) where the "
            "release supports them")


# A relocation error names the function whose code overflowed (`aotriton::v2::flash::…`,
# `composable_kernel`'s `ck::…`): the project it belongs to is the subject.
_RELOC_OWNER = re.compile(r"\b(aotriton|ck_tile|ck|flash|fbgemm|hipblaslt|rocblas)::")
_RELOC_PROJECT = {"ck": "composable_kernel", "ck_tile": "composable_kernel"}
# CMake's Makefile and Ninja generators put a target's objects in CMakeFiles/<target>.dir/
# (every CMake build log in the corpus; the CMake source line itself unverified here).
_CMAKE_TARGET = re.compile(r"\bCMakeFiles/([\w.+-]+)\.dir/")


def _dso_missing(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("lib")
    name = re.split(r"[\\/]", path)[-1]
    stem = name.split(".so")[0]
    flag = "-l" + stem[3:] if stem.startswith("lib") else path
    symbol = next((found.group("sym") for line in reversed(view.previous[-3:])
                   if (found := _DSO_SYMBOL.search(line))), "")
    used = f" ({symbol})" if symbol else ""
    return Reading(
        subject=stem,
        cause=f"the link uses a symbol{used} that {path} defines, but {name} is not on the "
              "link line itself, only a dependency of another library on it: GNU ld does not "
              "take symbols from such indirect dependencies, so the link stops",
        fix=f"link {stem} directly (add {flag} to this target's libraries: CMake "
            f"target_link_libraries(<target> ... {stem[3:] if stem.startswith('lib') else stem}), "
            "or LDFLAGS/LIBS), then link again")


def _needed_not_found(match: re.Match[str], view: LineView) -> Reading | None:
    needed, by = match.group("needed"), match.group("by")
    stem = needed.split(".so")[0]
    return Reading(
        subject=stem,
        cause=f"{by} needs {needed} (its DT_NEEDED) and the linker did not find it, so the "
              f"symbols {by} takes from it stay undefined: {needed} is not installed, or its "
              "folder is on neither the link's -rpath-link / -L paths nor the system's "
              "library paths",
        fix=f"add the folder that holds {needed} to the link (-Wl,-rpath-link,<dir>; CMake: "
            "target_link_directories or CMAKE_PREFIX_PATH at that install), or install the "
            f"package that ships {needed}; then link again")


_DSO_SYMBOL = re.compile(r"undefined reference to symbol '(?P<sym>[^'@]+)")


RULES: tuple[Rule, ...] = (
    Rule(id="relocation-overflow", klass="link",
         triggers=("relocation",),
         pattern=rx(r"(?:relocation (?:truncated to fit|R_X86_64_\w+ out of range|overflow)"
                     r"|failed to convert GOTPCREL relocation|relocation overflows omitted)"
                     r"(?:.*?(?P<what>lib\w+\.so))?"),
         read=_relocation_overflow, source="GNU ld / lld relocation range errors"),
    Rule(id="link-not-pic", klass="link",
         triggers=("recompile with -fPIC",),
         pattern=rx(r"(?:(?P<arch>[^\s:()]+\.a)\([^)]+\)|(?P<obj>[^\s:()]+\.o)): "
                     r"(?:relocation (?P<reloc>R_\w+) against .* can not be used when making a "
                     r"shared object|requires dynamic (?P<reloc2>R_\w+) reloc (?:against|which may "
                     r"overflow))"
                     r".*recompile with -fPIC"),
         read=lambda m, v: _not_pic(m, v) if m.group("reloc") else _not_pic_reading(
             m.group("arch") or m.group("obj") or "", m.group("reloc2")),
         source="GNU ld's x86-64 backend ('<archive>(<obj>): relocation R_… against symbol "
         "`…' can not be used when making a shared object; recompile with -fPIC') and gold "
         "('requires dynamic R_… reloc against '…' which may overflow at runtime; recompile "
         "with -fPIC'; for a local symbol, 'requires dynamic R_… reloc which may overflow "
         "at runtime', no 'against': make/devq8.sh): the texts as binutils 2.40's ld and "
         "ld.gold print them here, reproduced (make/link_not_pic.sh); the binutils source "
         "files were not read"),
    Rule(id="link-not-pic-lld", klass="link",
         triggers=(") in archive ",),
         pattern=_IN_ARCHIVE,
         read=_not_pic_lld,
         source="lld's ELF port ('relocation R_… cannot be used against symbol '…'; "
         "recompile with -fPIC', then '>>> defined in' and '>>> referenced by' lines, the "
         "last naming the archive): ld.lld 22 here, reproduced (make/link_not_pic.sh); the "
         "llvm-project source file was not read"),
    Rule(id="lld-undefined-version", klass="link",
         triggers=("version script assignment of",),
         pattern=rx(r"ld\.lld\S*: error: version script assignment of '(?P<node>[^']+)' to "
                     r"symbol '(?P<sym>[^']+)' failed: symbol not defined"),
         read=_stale_version_script, source="lld's ELF port (SymbolTable.cpp: 'version script "
         "assignment of '<node>' to symbol '<sym>' failed: symbol not defined', an error "
         "under --no-undefined-version, lld's default since LLVM 16, D135402; the text as "
         "lld's own test quotes it in the code index, commit not established); "
         "ROCm/ROCR-Runtime#204; ROCm/hip#3382"),
    Rule(id="link-not-pic-lld-object", klass="link",
         triggers=(".o:(",),
         pattern=rx(r"^(?:>>>\s+)?(?P<obj>\S+\.o(?:bj)?):\(.*\)\s*$"),
         read=_not_pic_object,
         source="lld's ELF port ('relocation R_… cannot be used against local symbol; "
         "recompile with -fPIC', then '>>> defined in <obj>', '>>> referenced by <src>' and "
         "'>>> <obj>:(<func>)' when the input is an object file, not an archive member); "
         "abetlen/llama-cpp-python#646"),
    Rule(id="link-dso-missing", klass="link",
         triggers=("DSO missing from command line",),
         pattern=rx(r"(?P<lib>\S+\.so(?:\.[\d.]+)?): error adding symbols: DSO missing from "
                    r"command line"),
         read=_dso_missing, source="GNU ld 2.40 (Debian 12's binutils): 'undefined reference "
         "to symbol 'sin@@GLIBC_2.2.5'' then '<lib>: error adding symbols: DSO missing from "
         "command line', for a symbol of a library reached only through another library's "
         "DT_NEEDED: reproduced here, make/devtl.sh (bfd source not read)"),
    Rule(id="link-needed-library-not-found", klass="link",
         triggers=("try using -rpath or -rpath-link",),
         pattern=rx(r"warning: (?P<needed>[\w.+-]+\.so[\w.]*), needed by (?P<by>\S+), not found "
                    r"\(try using -rpath or -rpath-link\)"),
         # a warning only: the link failed on it where symbols stayed undefined
         requires=rx(r"undefined reference to "),
         read=_needed_not_found, source="GNU ld 2.40 (Debian 12's binutils): 'warning: <lib>, "
         "needed by <lib2>, not found (try using -rpath or -rpath-link)', then '<lib2>: "
         "undefined reference to ...': reproduced here, make/devtl.sh (bfd source not read)"),
)
