"""A Python extension module the running Python cannot load because it needs a function of
CPython's C API that this interpreter does not export: the module was built for another
Python version, or it is loaded into a process that is not that Python.

Owns: the reading of the loader's undefined-symbol error for CPython C-API names; it comes
before loader.py's general reading of the same line. Must not: read other undefined symbols
(loader.py) or a linker's (link.py).
"""

from __future__ import annotations

import re

from rocmforge.triage.parsers.loader import _LINKER_SAYS, _WARNED_ONLY
from rocmforge.triage.rule import LineView, Reading, Rule, rx

# CPython's C API: Py<Area>_<Name>, Py_<Name> and the private _Py<...>_ names; only the
# interpreter (python3.X or libpython3.X.so) defines them, so a module that needs one the
# running interpreter lacks was built for another Python (a newer C API: PyType_FromMetaclass,
# which python3.11 here does not export; Python 2's Py_InitModule4) or is loaded into a
# process that is no Python.


def _python_c_api(match: re.Match[str], view: LineView) -> Reading | None:
    if _LINKER_SAYS.search(view.text) or _WARNED_ONLY.search(view.text):
        return None
    symbol, where = match.group("sym"), match.group("where") or ""
    module = where.rsplit("/", 1)[-1] or "a Python extension module"
    tag = re.search(r"\.(?P<tag>cpython-\d+\w*|abi3)(?:-[\w-]+)?\.so", module)
    built = (" (its file name says it is built for the stable ABI, which still needs the C "
             "API of the Python version it was compiled with or newer)"
             if tag and tag.group("tag") == "abi3" else
             f" (its file name says {tag.group('tag')})" if tag else "")
    return Reading(
        subject=symbol,
        cause=f"{module} needs {symbol}, a function of CPython's C API that the running Python "
              f"does not export: it was built for another Python version than the one loading "
              f"it{built}, or it was loaded (dlopen, ctypes) into a process that is not that "
              "Python",
        fix="run it with the Python version it was built for (the one of the wheel or build "
            "that made it; `python -c 'import sys; print(sys.version)'` shows the running one), "
            "or rebuild / reinstall the package for this Python; a C extension is imported by "
            "its Python, not loaded with ctypes by another")


RULES: tuple[Rule, ...] = (
    Rule(id="undefined-symbol-python-c-api", klass="import",
         triggers=("undefined symbol: ",),
         pattern=rx(r"(?:(?P<where>[\w./+-]+\.so[\w.]*): )?undefined symbol: "
                    r"(?P<sym>_?Py(?:[A-Z][A-Za-z0-9]*)?_[A-Za-z]\w*)\s*$"),
         read=_python_c_api, source="glibc dlerror() ('<file>: undefined symbol: <name>'); "
         "CPython's C API names (Py<Area>_<Name>; PyType_FromMetaclass is not exported by "
         "python3.11 here, nm -D; 'added in 3.12' unverified against python/cpython); "
         "reproduced with python3.11 here by make/devpk8.sh; ROCm/TheRock#5520"),
)
