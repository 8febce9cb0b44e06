"""Host compilers for the build: choose CC/CXX (pure), or switch the system's with
update-alternatives (`system`, the only module here that changes anything), reversibly.

Public entry points: `select.choose_build_compilers` / `select.CompilerChoice` (used by
`invoke env` and `invoke plan`), `inventory.take_inventory`, `system.execute_switch` /
`system.execute_restore`.
"""
