"""SQL a person or the model writes (``forge.sql``, ``%forge sql``, the sql tool): check (read-only,
one statement) · sandbox (run on the tenant's rows only) · timeout (how long it may run)."""
