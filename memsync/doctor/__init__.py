"""`memsync doctor`: exam.py runs the checks of checks.py and, when asked, the repairs."""
