"""memsync benchmarks: retrieval quality (`python -m bench.retrieval`) and performance
(`python -m bench.perf`). Run from the repository root; `make bench` runs both."""
