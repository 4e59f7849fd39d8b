"""Derive the package list so a new subpackage can never be left out of the wheel.

The C extensions, memsync._tokenstream (memsync.cjk's token stream and normalize, and the
near-duplicate shingles, in C) and memsync._overlap (the near-duplicate detection's counting), are
optional: where they cannot be built (no compiler), the package installs without them and
memsync.cjk and memsync.lifecycle.shingles do the same work in Python. Everything else lives in setup.cfg. The
engine is `memsync/`; the adapters live in the top-level `adapters/` folder but install as
`memsync.adapters` (package_dir in setup.cfg).
"""

from setuptools import Extension, find_packages, setup

engine = find_packages(include=["memsync", "memsync.*"])
adapters = ["memsync.adapters"] + [f"memsync.adapters.{p}" for p in find_packages("adapters")]

tokenstream = Extension("memsync._tokenstream", ["memsync/_tokenstream.c"], optional=True)
overlap = Extension("memsync._overlap", ["memsync/_overlap.c"], optional=True)

setup(packages=engine + adapters, ext_modules=[tokenstream, overlap])
