"""The DuckDB backend: store (one file, opened by every kernel of a machine in turn) · file
(the shared handle, the lock) · errors (what a damaged or foreign file says) · schema (its
migrations, rendered from sql/tables.py)."""
