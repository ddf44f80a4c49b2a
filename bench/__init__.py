"""Benchmarks: not run by the unit tests; each module runs with `python -m bench.<name>`."""
