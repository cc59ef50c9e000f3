"""Bundles the built core into the wheel (the rest is in pyproject.toml).

``pip install ./harness/python`` after ``make lib`` copies
``<repo>/lib/libjcode_mobile.so.1`` into ``jcode_mobile/_lib/``, where
:func:`jcode_mobile.binding.library_path` finds it. Without a built library
the package still installs and then looks for ``$JCODE_MOBILE_LIB`` or a
system-wide ``libjcode_mobile.so.1`` (``make install``).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
BUILT = HERE.parents[1] / "lib" / "libjcode_mobile.so.1"


class BuildWithLibrary(build_py):
    def run(self) -> None:
        super().run()
        if BUILT.exists():
            target = Path(self.build_lib) / "jcode_mobile" / "_lib"
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(BUILT, target / BUILT.name)
        else:
            print(f"note: {BUILT} is not built; the installed package will use $JCODE_MOBILE_LIB "
                  "or a system-wide libjcode_mobile.so.1")


setup(cmdclass={"build_py": BuildWithLibrary})
