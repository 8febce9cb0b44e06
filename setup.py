"""Build hook: an installed wheel carries the kit's config/ and patches/ inside the package.

A checkout (and `pip install -e .`) reads them beside the package; `pip install .` (as nox's build
and verify sessions do) has no checkout to read from, so they are copied to rocmforge/_kit/.
Everything else about the package is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildPyWithKitData(build_py):
    def run(self) -> None:
        super().run()
        for name in ("config", "patches"):
            target = Path(self.build_lib) / "rocmforge" / "_kit" / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(ROOT / name, target)


setup(cmdclass={"build_py": BuildPyWithKitData})
