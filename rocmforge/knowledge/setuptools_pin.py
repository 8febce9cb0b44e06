"""The setuptools release that removed `pkg_resources`, and the pin the build venv gets when a
checkout still imports it.

setuptools 82.0.0 removed `pkg_resources` (pypa/setuptools@7d531288b7c8708d4cc186213da93eaf5d11833d:
NEWS.rst, "v82.0.0"); a setup.py that imports it then stops with "No module named
'pkg_resources'" (ROCm/TheRock#3311, pytorch/vision#9380).
"""

from __future__ import annotations

from typing import Final

SETUPTOOLS_WITHOUT_PKG_RESOURCES: Final = "82"
PKG_RESOURCES_PIN: Final = f"setuptools<{SETUPTOOLS_WITHOUT_PKG_RESOURCES}"
"""The requirement the build-requirements step adds for a checkout that imports pkg_resources."""
