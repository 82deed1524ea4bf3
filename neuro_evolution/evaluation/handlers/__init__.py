"""Evaluation handlers: sequential, multiprocessing, dask, vectorized."""
