"""Adapters: the ports made real for each backend."""
