"""Alembic environment: runs the migrations on the connection handed over in ``config.attributes``."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
