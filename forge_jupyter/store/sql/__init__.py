"""The SQL both engines share, written once: tables (the one declaration of every table, rendered
per dialect) · dialect (the few spellings that differ) · views · reads · writes · store (the
contract over that SQL) · scoped (forge's own SELECTs, one tenant) · memory_index (the long-term
memory index's SQL)."""
