import sqlalchemy as sa

from orchestration.db.migrate import current_revision, upgrade
from orchestration.settings import Settings


def test_migrations_apply_to_empty_database_and_rerun_harmlessly(server_url):
    from orchestration.db.engine import create_app_engine, ensure_database

    url = server_url.set(database="hreg_test_migrations")
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text('DROP DATABASE IF EXISTS "hreg_test_migrations" WITH (FORCE)'))
    ensure_database(url)
    engine = create_app_engine(url)
    assert current_revision(engine) is None
    upgrade(engine, Settings())
    head = current_revision(engine)
    upgrade(engine, Settings())
    assert current_revision(engine) == head
    with engine.connect() as conn:
        tables = set(conn.execute(sa.text(
            "SELECT schemaname || '.' || tablename FROM pg_tables WHERE schemaname IN ('public','content','processing')"
        )).scalars())
    assert {"public.searches", "content.entities", "content.raw_documents", "processing.processing_jobs",
            "processing.job_types", "processing.job_step_history"} <= tables
    engine.dispose()
    with admin.connect() as conn:
        conn.execute(sa.text('DROP DATABASE "hreg_test_migrations" WITH (FORCE)'))
    admin.dispose()
