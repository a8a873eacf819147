"""numba_ta's benchmarks, outside the installed package.

``workloads.py``: the workloads and baselines, defined once; ``report.py``: the
``numba-ta bench`` report; ``bench_*.py``: the asv suite (see ``common.py`` for
its parameters and switches).
"""
