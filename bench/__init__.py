"""Benchmarks: each prints its figures and its ratio against a baseline measured in the same run."""
