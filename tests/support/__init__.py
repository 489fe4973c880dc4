"""Helpers shared by the tests (stand-in servers, stores, hand-built reports); no tests here."""
