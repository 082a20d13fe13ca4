"""The use cases: what a route or a worker asks of the memory, carried out over the
ports with the domain's rules. `memory.py` `Memory` holds them (the erasure ones in
`erasure_cases.py`, the background ones in `background.py`); `work.py` is the
worker's pass over a project. The domain (taisce/domain) never imports this package.
"""
