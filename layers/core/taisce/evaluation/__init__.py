"""Retrieval-quality evaluation: `taisce bench quality FILE`.

Loads conversations whose questions have known evidence messages (the dataset format of
docs/quality.md), stores them through the API, recalls each question at
fixed budgets and measures how often the bundle covers the evidence, beside simple
baselines over whole messages (BM25, dense, their fusion, recency) at the same budgets.
"""
