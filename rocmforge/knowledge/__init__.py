"""Knowledge: the kit's facts (config/*.toml) as frozen dataclasses.

Pure: reads files, never probes the machine.
"""
