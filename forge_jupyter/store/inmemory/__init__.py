"""The in-memory backend (``Forge(db=":memory:")``): store (Python dicts behind the contract)
· sql (its rows in a scratch DuckDB for the views and SQL)."""
