"""Code and flags written for another compiler, or for an older release of the same one: a
GCC warning a newer GCC finds and -Werror turns into an error, GCC 15's C23 default for an
empty parameter list, MSVC's cl given a GCC/clang warning flag, a fallback for a GCC builtin
(written for MSVC) that clang, which has the builtin, refuses.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _gcc_werror(match: re.Match[str], view: LineView) -> Reading | None:
    warning = match.group("warning")
    return Reading(
        subject="gcc",
        cause=f"GCC's -W{warning} warning is an error in this build (-Werror or "
              f"-Werror={warning} in its flags): a newer GCC than the sources were tested with "
              "warns where the older one did not, and the build stops on it",
        fix=f"add -Wno-error={warning} to the component's C/C++ flags (CFLAGS/CXXFLAGS, or "
            f"CMAKE_CXX_FLAGS), or build with the GCC it was released with (`invoke build "
            "--gcc N`); a newer release of the component may have fixed the code")


def _c23_empty_parens(match: re.Match[str], view: LineView) -> Reading | None:
    file, func = match.group("file"), match.group("func")
    return Reading(
        subject="gcc",
        cause=f"{func} is declared with an empty parameter list and called with arguments in "
              f"{file}: GCC 15 compiles C as C23 by default, where `()` means no parameters "
              "(older standards left them unspecified), so code written for C17 stops",
        fix=f"compile this C code with -std=gnu17 (add it to CFLAGS, or CMAKE_C_FLAGS), or "
            f"build with GCC 14 or older (`invoke build --gcc 14`); a newer release of the "
            f"project that owns {file} may declare the parameters")


def _cl_gnu_warning_flag(match: re.Match[str], view: LineView) -> Reading | None:
    flag = "-" + match.group("flag")[1:]
    return Reading(
        subject="cl",
        cause=f"MSVC's cl.exe was given {flag}, a GCC/clang warning flag: cl reads -W as its "
              "own warning level and wants a number there, so it stops; the flags come from "
              "a setup written for clang (the ROCm/HIP flags a HIP build adds), and the "
              "compiler CMake picked is cl.exe",
        fix="compile with clang-cl (ROCm's, from the same install as the HIP headers): "
            "configure from a clean build folder with -DCMAKE_C_COMPILER=clang-cl "
            "-DCMAKE_CXX_COMPILER=clang-cl (or CC=clang-cl CXX=clang-cl)")


def _builtin_redeclared(match: re.Match[str], view: LineView) -> Reading | None:
    if not any("cannot be overloaded" in line or "conflicting types for" in line
               for line in view.previous[-3:]):
        return None  # the note without clang's error about the source's own declaration
    name = match.group("name")
    return Reading(
        subject="clang",
        cause=f"the source declares its own {name}, which clang has built in with another "
              "type: a fallback written for a compiler without the GCC builtins (MSVC) is "
              "compiled by clang (clang-cl on Windows), its #if guard testing the platform "
              "rather than the compiler",
        fix=f"restrict the source's {name} fallback to MSVC (`#if defined(_MSC_VER) && "
            "!defined(__clang__)`), as a patch or a release of the project that guards it "
            "so, or compile this part with the compiler the fallback was written for")


def _attribute_on_type(match: re.Match[str], view: LineView) -> Reading | None:
    if match.group("gcc"):
        return Reading(
            subject="gcc",
            cause="g++ refuses a standard (C++11) attribute, such as alignas(...), placed in "
                  "the middle of the declaration's specifiers (after a GNU attribute or a "
                  "macro that expands to one, as `__shared__ alignas(16)`): GCC 11 warned and "
                  "ignored it, GCC 12 and later stop",
            fix="move the attribute to the front of the declaration (before __shared__ and "
                "the other specifiers), or write it as a GNU attribute "
                "(`__attribute__((aligned(N)))`, HIP's __align__(N)); or build with the "
                "compiler release the sources were tested with")
    attribute = match.group("attr")
    if not match.group("head") and not (view.previous and view.previous[-1].endswith("error:")):
        return None  # the message without its "error:" (a wrapped log keeps it a line above)
    return Reading(
        subject="clang",
        cause=f"clang reads the C++11 attribute '{attribute}' as applying to a type and "
              "refuses it: the source places it in the middle of the declaration's "
              f"specifiers (after a GNU attribute or a macro that expands to one, as "
              f"`__shared__ {attribute}(...)`), a placement some compiler releases accept and "
              "this clang does not",
        fix=f"move {attribute}(...) to the front of the declaration (before __shared__ and "
            "the other specifiers), or write it as a GNU attribute "
            "(`__attribute__((aligned(N)))`, HIP's __align__(N)); or build with the compiler "
            "release the sources were tested with")


RULES: tuple[Rule, ...] = (
    Rule(id="attribute-on-type", klass="host-compiler",
         triggers=("attribute cannot be applied to types", "standard attributes in middle"),
         pattern=rx(r"(?P<head>error: |^)'(?P<attr>alignas|\w+(?:::\w+)?)' attribute cannot "
                    r"be applied to types"
                    r"|(?P<gcc>error: standard attributes in middle of decl-specifiers$)"),
         read=_attribute_on_type,
         source="clang's err_attribute_not_type_attr (\"'alignas' attribute cannot be applied "
         "to types\"): clang++-22 here on `static __attribute__((used)) alignas(16) D s[4];`, "
         "make/devcc6.sh; g++-12's words for it, 'error: standard attributes in middle of "
         "decl-specifiers' (g++-11 only warns 'attribute ignored'): make/devq8.sh; "
         "ROCm/aiter#4777"),
    Rule(id="gcc-warning-as-error", klass="host-compiler",
         triggers=("[-Werror=",),
         pattern=rx(r"(?:^|\s)error: .*\[-Werror=(?P<warning>[\w+-]+)=?\]\s*$"),
         read=_gcc_werror, source="GCC's diagnostic suffix for a warning made an error "
         "('error: ... [-Werror=array-bounds]'; clang writes '[-Werror,-W<w>]' instead): "
         "reproduced: make/devbt5.sh (gcc 12, -O2 -Wall -Werror); pytorch/FBGEMM#3798"),
    Rule(id="gcc15-c23-empty-parens", klass="host-compiler",
         triggers=("; expected 0, have ",),
         pattern=rx(r"^(?P<file>\S+\.c):\d+:\d+: error: too many arguments to function "
                    r"[\u2018'](?:\(\*)?(?P<func>\w+)\)?[\u2019']; expected 0, have \d+"),
         read=_c23_empty_parens, source="GCC 15's C front end ('too many arguments to function "
         "'<f>'; expected 0, have <n>'), its default -std=gnu23 (unverified: GCC's source and "
         "release notes not read here; the wording is ROCm/TheRock#1433's log); in C17 an "
         "empty list was unprototyped and took any arguments (tried here by hand: clang-22 "
         "-std=c23 stops on such a call, gcc-12 -std=c2x does not)"),
    Rule(id="msvc-cl-gnu-warning-flag", klass="host-compiler",
         triggers=("D8021",),
         pattern=rx(r"\bcl(?:\.exe)? : Command line error D8021 : invalid numeric argument "
                    r"'(?P<flag>[/-]W(?:no-)?[a-z][\w=-]*)'"),
         read=_cl_gnu_warning_flag, source="MSVC cl's command-line error D8021 ('invalid "
         "numeric argument', for /W<n> given a name; Microsoft's error reference not read "
         "here: unverified beyond the log); ROCm/TheRock#1091"),
    Rule(id="clang-builtin-redeclared", klass="host-compiler",
         triggers=("is a builtin with type",),
         pattern=rx(r"note: '(?P<name>__builtin_\w+)' is a builtin with type"),
         read=_builtin_redeclared, source="clang's note for a declaration that clashes with a "
         "builtin ('functions that differ only in their return type cannot be overloaded', "
         "then \"note: '__builtin_clz' is a builtin with type 'int (unsigned int) noexcept'\"): "
         "reproduced with clang++-22 and clang-cl-22 (make/devbt5.sh); ROCm/TheRock#1140"),
)
