"""Benchmarks of the vectorised runner against a plain loop over runs (``make bench``)."""
