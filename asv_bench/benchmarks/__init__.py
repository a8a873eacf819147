"""asv benchmarks of numba_ta (see common.py for the parameters and switches)."""
