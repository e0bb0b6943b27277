"""The PostgreSQL backend: store (the pool, tenancy per transaction) · connection (the shared
SQL's placeholders) · schema (its migrations, row-level security, the migrate command) · select
(the frames' SQL there) · tenant_copy (the tenant's rows copied out for ``forge.sql``)."""
