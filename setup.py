"""Derive the package list so a new subpackage can never be left out of the wheel.

Everything else lives in setup.cfg. The engine is `memsync/`; the adapters live in the top-level
`adapters/` folder but install as `memsync.adapters` (package_dir in setup.cfg).
"""

from setuptools import find_packages, setup

engine = find_packages(include=["memsync", "memsync.*"])
adapters = ["memsync.adapters"] + [f"memsync.adapters.{p}" for p in find_packages("adapters")]

setup(packages=engine + adapters)
