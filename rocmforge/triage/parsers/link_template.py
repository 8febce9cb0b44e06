"""A shared library this build made that calls a function template's specialization no
object of it instantiates: GNU ld's undefined reference named after the library.

Owns: that rule (link.py's `undefined-reference` declines every shared library's line). Must
not: read files, run programs or pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.demangle import demangle
from rocmforge.triage.parsers.link import _CK_NAMESPACE as CK_NAMESPACE
from rocmforge.triage.rule import LineView, Reading, Rule, rx

# GNU ld, linking against a shared library that itself needs a symbol nobody defines
# (binutils' check for a DSO's undefined references, g++-12 here: make/devbt9.sh):
# "ld: ../bin/libfa.so.0.1: undefined reference to `void fa_vec_case<128, 2>(float*)'".
_SHARED_LIBRARY = re.compile(r"^(?:\S*ld\S*: )?(?P<lib>\S+\.so(?:\.[\w.-]+)?): undefined "
                             r"reference to ")
# A function template's specialization: "<ret> name<args>(params)" (args may hold casts).
_TEMPLATE_SPECIALIZATION = re.compile(r"(?:^|\s)(?P<name>[A-Za-z_][\w:]*)<.*>\(")
# Libraries of an installed system, ROCm or Python package, or of a conda, mamba or Nix
# environment's prefix: not the project's own build.
_INSTALLED = re.compile(r"^/(?:usr|lib|lib64|opt)/|site-packages|dist-packages|/rocm|"
                        r"/(?:mini|ana)conda\d*/|/mini(?:forge|mamba)\d*/|/mambaforge/|"
                        r"/envs/[^/]+/lib/|^/nix/store/")
# A versioned inline namespace (fmt::v9::, absl::lts_2023…::, tbb::detail::r1::) is another
# library's ABI version: the call was compiled against another release of that library.
_VERSIONED_NAMESPACE = re.compile(r"::(?:v\d+|lts_\d+|r\d+)::")


def _template_instance_missing(match: re.Match[str], view: LineView) -> Reading | None:
    found, symbol = _SHARED_LIBRARY.match(view.text), demangle(match.group("sym"))
    template = _TEMPLATE_SPECIALIZATION.search(symbol)
    if found is None or template is None or _INSTALLED.search(found.group("lib")):
        return None  # a library the build did not make, or a plain function: nothing claimed
    name = template.group("name")
    if name.startswith(("std::", "__gnu_cxx::", "__cxx")) or CK_NAMESPACE.search(name):
        return None  # the standard library's (version skew) or Composable Kernel's own
    if _VERSIONED_NAMESPACE.search(name):
        return None  # another library's release (make/rv10.sh): not this build's instances
    library = found.group("lib").replace("\\", "/").rsplit("/", 1)[-1]
    return Reading(
        subject=name,
        cause=f"{library}, built by this build, calls the template {name} with arguments "
              f"for which no object in it has an instantiation ({symbol}): the template's "
              "explicit instances live in separate source files, and the one for these "
              "arguments was not compiled into the library (an instance file missing from "
              "the source list or glob, excluded by a build option, or a stale build folder)",
        fix=f"compile the instance source that defines {name} for these arguments into "
            f"{library} (add it to the build's source list or turn on the option that "
            "builds that set of instances), or keep the calling code from selecting it; "
            "then rebuild from a clean build folder")


RULES: tuple[Rule, ...] = (
    Rule(id="shared-library-template-instance", klass="link",
         triggers=("undefined reference to",),
         pattern=rx(r"\.so(?:\.[\w.-]+)?: undefined reference to [`'](?P<sym>[^'`]+)'"),
         read=_template_instance_missing,
         source="GNU ld's undefined reference named after a shared library on the link line "
         "(g++-12's ld here: make/devbt9.sh); TheTom/llama-cpp-turboquant#96"),
)
