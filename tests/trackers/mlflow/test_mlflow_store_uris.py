"""A database tracking URI whose driver is not installed: one sentence, the package to install, no password."""

from __future__ import annotations

import importlib.util

import pytest

from rl_reliable_logger.errors import TrackerError
from rl_reliable_logger.trackers.mlflow.client import Tracker

DRIVERS = [
    ("postgresql://bob:S3CRET@127.0.0.1:1/db", "psycopg", "PostgreSQL", "psycopg[binary]"),
    ("mysql://bob:S3CRET@127.0.0.1:1/db", "MySQLdb", "MySQL", "mysqlclient"),
]


@pytest.mark.parametrize(("uri", "module", "database", "package"), DRIVERS)
def test_a_missing_database_driver_is_one_sentence_naming_the_package(uri, module, database, package):
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here")
    with pytest.raises(TrackerError) as err:
        Tracker(uri)
    text = str(err.value)
    assert f"needs a {database} driver" in text and f"pip install '{package}'" in text and repr(module) in text
    assert "S3CRET" not in text and "bob:***@127.0.0.1" in text and "\n" not in text


def test_any_missing_module_of_a_store_is_named():
    from rl_reliable_logger.trackers.mlflow.client import missing_module

    err = ModuleNotFoundError("No module named 'pymssql'", name="pymssql")
    text = str(missing_module("mssql+pymssql://u:pw@h/db", "mssql+pymssql://u:***@h/db", err))
    assert "SQL Server driver" in text and "pip install 'pymssql'" in text and "pw@" not in text
    other = str(missing_module("databricks://x", "databricks://x", ModuleNotFoundError("x", name="databricks.sdk")))
    assert "'databricks.sdk'" in other and "pip install 'databricks-sdk'" in other
