"""Derive the package list so a new subpackage can never be left out of the wheel.

The one C extension, memsync._tokenstream (memsync.cjk's token stream, in C), is optional: where
it cannot be built (no compiler), the package installs without it and memsync.cjk makes the same
stream in Python. Everything else lives in setup.cfg. The engine is `memsync/`; the adapters
live in the top-level `adapters/` folder but install as `memsync.adapters` (package_dir in
setup.cfg).
"""

from setuptools import Extension, find_packages, setup

engine = find_packages(include=["memsync", "memsync.*"])
adapters = ["memsync.adapters"] + [f"memsync.adapters.{p}" for p in find_packages("adapters")]

tokenstream = Extension("memsync._tokenstream", ["memsync/_tokenstream.c"], optional=True)

setup(packages=engine + adapters, ext_modules=[tokenstream])
