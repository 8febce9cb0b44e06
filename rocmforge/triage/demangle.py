"""C++ symbol names as a person reads them: `_ZN2at6native3addEv` → `at::native::add()`.

Owns: one call into the C++ runtime's own demangler (`__cxa_demangle` of libstdc++, loaded with
ctypes once), so no program is run. Must not: fail: a name it cannot demangle is returned as is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache


@lru_cache(maxsize=1)
def _demangler() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    for name in ("libstdc++.so.6", ctypes.util.find_library("stdc++") or ""):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        func = lib.__cxa_demangle
        func.restype = ctypes.c_void_p
        func.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.POINTER(ctypes.c_int)]
        return func
    return None


@lru_cache(maxsize=512)
def demangle(symbol: str) -> str:
    """The readable name of an Itanium-ABI symbol; anything else comes back unchanged."""
    if not symbol.startswith("_Z"):
        return symbol
    func = _demangler()
    if func is None:
        return symbol
    status = ctypes.c_int(0)
    pointer = func(symbol.encode(), None, None, ctypes.byref(status))
    if status.value != 0 or not pointer:
        return symbol
    try:
        return ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        libc = ctypes.CDLL(None)
        libc.free(ctypes.c_void_p(pointer))
