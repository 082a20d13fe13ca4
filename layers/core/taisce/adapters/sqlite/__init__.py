"""The embedded backend: the store (store.SqliteStore) and the vector index
(vectors.SqliteVectorIndex), sharing one SQLite file (file.py)."""
