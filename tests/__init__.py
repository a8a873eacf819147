"""numba_ta's test suite.

A package, so that the test modules import their shared helpers as ``tests.helpers.<name>``
(pytest puts the repository root on the import path: ``pythonpath = ["."]`` in
``pyproject.toml``).  Shared fixtures are in ``tests/conftest.py``.
"""
