"""A database tracking URI whose driver is not installed: one sentence, the package to install, no password."""

from __future__ import annotations

import importlib.util

import pytest

from rl_reliable_logger.errors import TrackerError
from rl_reliable_logger.trackers.mlflow.client import Tracker

#: Each URI with the drivers SQLAlchemy may load for it (its version decides: 2.1 loads psycopg for postgresql://,
#: 2.0 psycopg2) and the package each is installed from.
DRIVERS = [
    (
        "postgresql://bob:S3CRET@127.0.0.1:1/db",
        "PostgreSQL",
        {"psycopg": "psycopg[binary]", "psycopg2": "psycopg2-binary"},
    ),
    ("mysql://bob:S3CRET@127.0.0.1:1/db", "MySQL", {"MySQLdb": "mysqlclient"}),
]


@pytest.mark.parametrize(("uri", "database", "drivers"), DRIVERS)
def test_a_missing_database_driver_is_one_sentence_naming_the_package(uri, database, drivers):
    if any(importlib.util.find_spec(module) is not None for module in drivers):
        pytest.skip(f"a driver of {database} is installed here")
    with pytest.raises(TrackerError) as err:
        Tracker(uri)
    text = str(err.value)
    assert f"needs a {database} driver" in text, text
    assert any(repr(module) in text and f"pip install '{package}'" in text for module, package in drivers.items()), text
    assert "S3CRET" not in text and "bob:***@127.0.0.1" in text and "\n" not in text


def test_any_missing_module_of_a_store_is_named():
    from rl_reliable_logger.trackers.mlflow.client import missing_module

    err = ModuleNotFoundError("No module named 'pymssql'", name="pymssql")
    text = str(missing_module("mssql+pymssql://u:pw@h/db", "mssql+pymssql://u:***@h/db", err))
    assert "SQL Server driver" in text and "pip install 'pymssql'" in text and "pw@" not in text
    other = str(missing_module("databricks://x", "databricks://x", ModuleNotFoundError("x", name="databricks.sdk")))
    assert "'databricks.sdk'" in other and "pip install 'databricks-sdk'" in other
