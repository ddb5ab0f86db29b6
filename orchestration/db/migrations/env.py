"""Alembic environment: runs the migrations on the connection handed over in ``config.attributes``.

An upgrade that ends at head then applies the definitions of functions, triggers and views that
changed (all of them when a versioned migration ran), in the same transaction.
"""

from alembic import context

from orchestration.db import sql_definitions

connection = context.config.attributes["connection"]
context.configure(connection=connection, transactional_ddl=True)
with context.begin_transaction():
    migration_context = context.get_context()
    before = set(migration_context.get_current_heads())
    context.run_migrations()
    after = set(migration_context.get_current_heads())
    if after == set(context.script.get_heads()):
        sql_definitions.apply(connection, everything=after != before)
