"""The document store by relative key, on a local directory and on S3 (moto's standalone server),
and documents stored under absolute local paths before keys moved into the configured store."""

from __future__ import annotations

import hashlib
import warnings

import boto3
import dagster as dg
import pandas as pd
import pytest
import sqlalchemy as sa

from assets.shareholders import ownership_graph
from orchestration.db.migrate import upgrade
from orchestration.definitions import build_resources
from orchestration.records.documents import DocumentStore
from orchestration.records.object_store import MissingObject, open_object_store
from orchestration.settings import Settings
from service_helpers import moto_s3_server

BUCKET = "hreg-documents"


@pytest.fixture(scope="module")
def s3_environment(tmp_path_factory):
    with moto_s3_server(tmp_path_factory.mktemp("moto")) as env:
        yield env


@pytest.fixture
def s3(s3_environment, monkeypatch):
    for name, value in s3_environment.items():
        monkeypatch.setenv(name, value)
    client = boto3.client("s3")
    client.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "eu-central-1"})
    yield client
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        for item in page.get("Contents", []):
            client.delete_object(Bucket=BUCKET, Key=item["Key"])
    client.delete_bucket(Bucket=BUCKET)


@pytest.fixture
def scanned_list(samples_dir) -> bytes:
    return (samples_dir / "gesellschafterliste" / "HRB_70597.pdf").read_bytes()


def stored_row(engine, row_id):
    with engine.connect() as conn:
        return conn.execute(
            sa.text("SELECT content, storage_path FROM content.raw_documents WHERE id = :id"), {"id": row_id}
        ).one()


def test_a_document_on_s3_is_stored_by_key_and_read_by_another_host(engine, s3, scanned_list, tmp_path):
    writer = DocumentStore(f"s3://{BUCKET}/register", inline_limit_bytes=0)
    with engine.begin() as conn:
        row_id = writer.store(conn, scanned_list, kind="shareholder_list", media_type="application/pdf")
    sha256 = hashlib.sha256(scanned_list).hexdigest()
    row = stored_row(engine, row_id)
    assert row.content is None and row.storage_path == f"{sha256[:2]}/{sha256}"
    # The object is where the location says, as any S3 client sees it.
    assert s3.get_object(Bucket=BUCKET, Key=f"register/{sha256[:2]}/{sha256}")["Body"].read() == scanned_list

    # Another host names the same store: it reads the bytes without any file of the writer's.
    reader = DocumentStore(f"s3://{BUCKET}/register/")
    with engine.connect() as conn:
        (document,) = reader.load(conn, [row_id]).values()
    assert document.content == scanned_list
    assert list(tmp_path.iterdir()) == []


def test_the_same_bytes_are_put_once(engine, s3, scanned_list):
    store = DocumentStore(f"s3://{BUCKET}", inline_limit_bytes=0)
    with engine.begin() as conn:
        first = store.store(conn, scanned_list, kind="shareholder_list", media_type="application/pdf")
        second = store.store(conn, scanned_list, kind="shareholder_list", media_type="application/pdf")
    assert first == second
    assert s3.list_objects_v2(Bucket=BUCKET)["KeyCount"] == 1


def test_a_key_the_store_lacks_is_a_clear_error(s3):
    with pytest.raises(MissingObject, match=f"s3://{BUCKET}/: no object 'ab/missing'"):
        open_object_store(f"s3://{BUCKET}").get("ab/missing")


def test_a_local_directory_is_a_store_by_key_too(engine, scanned_list, tmp_path):
    store = DocumentStore((tmp_path / "documents").as_uri(), inline_limit_bytes=0)
    with engine.begin() as conn:
        row_id = store.store(conn, scanned_list, kind="shareholder_list", media_type="application/pdf")
    key = stored_row(engine, row_id).storage_path
    assert not key.startswith("/")
    assert (tmp_path / "documents" / key).read_bytes() == scanned_list


@pytest.mark.parametrize("location", ["s3://", "ftp://host/documents"])
def test_a_location_that_names_no_store_is_refused(location):
    with pytest.raises(ValueError, match="s3://"):
        open_object_store(location)


def test_upgrade_moves_documents_stored_by_absolute_path_into_the_store(
    engine, s3, scanned_list, tmp_path, monkeypatch
):
    # Rows as stored before keys: the file under the old host's directory, its absolute path in the row.
    sha256 = hashlib.sha256(scanned_list).hexdigest()
    old_file = tmp_path / "old-host" / sha256[:2] / sha256
    old_file.parent.mkdir(parents=True)
    old_file.write_bytes(scanned_list)
    lost_path = str(tmp_path / "old-host" / "00" / "gone")
    insert = sa.text("""
        INSERT INTO content.raw_documents (sha256, kind, media_type, size_bytes, storage_path)
        VALUES (:sha256, 'shareholder_list', 'application/pdf', :size, :path) RETURNING id
    """)
    with engine.begin() as conn:
        moved_id = conn.execute(insert, {"sha256": sha256, "size": len(scanned_list), "path": str(old_file)}).scalar()
        lost_id = conn.execute(insert, {"sha256": "00" + "0" * 62, "size": 1, "path": lost_path}).scalar()

    monkeypatch.setenv("HREG_DOCUMENT_STORE", f"s3://{BUCKET}/register")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        upgrade(engine, Settings())
    assert any(lost_path in str(w.message) and "hreg db upgrade" in str(w.message) for w in caught)

    assert stored_row(engine, moved_id).storage_path == f"{sha256[:2]}/{sha256}"
    old_file.unlink()  # the old host's disk is gone: the document reads from the store
    with engine.connect() as conn:
        (document,) = DocumentStore(f"s3://{BUCKET}/register").load(conn, [moved_id]).values()
    assert document.content == scanned_list
    # A row whose file is missing keeps its path: nothing is lost.
    assert stored_row(engine, lost_id).storage_path == lost_path


def test_ownership_graph_goes_to_the_object_store_when_documents_do(settings, s3):
    on_s3 = settings.model_copy(update={"document_store": f"s3://{BUCKET}/register"})
    resources = build_resources(on_s3)
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [ownership_graph],
            instance=instance,
            resources={key: resources[key] for key in ("database", "ownership_graph_io_manager")},
        )
    assert result.success
    keys = [item["Key"] for item in s3.list_objects_v2(Bucket=BUCKET, Prefix="register/dagster/")["Contents"]]
    assert keys == ["register/dagster/ownership_graph"]
    stored = pd.read_pickle(s3.get_object(Bucket=BUCKET, Key=keys[0])["Body"])
    assert list(stored.columns) == list(result.output_for_node("ownership_graph").columns)
