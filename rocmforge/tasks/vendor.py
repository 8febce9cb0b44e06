"""Invoke tasks: vendor. Thin adapters: parse flags, call the library, print the report."""

from __future__ import annotations

# Tasks of this module, added to the `rocm` collection by rocmforge.tasks.
TASKS: tuple = ()
# Sub-collections (e.g. `triton`), added by name.
COLLECTIONS: tuple = ()
