"""Tests of the benchmarks' own logic (``bench/``): checkers that must judge correctly."""
