"""Drivers for peer systems measured beside memsync in bench/perf.py."""
