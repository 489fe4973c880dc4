"""Tracker adapters (sources and sinks). Each tracker module imports its client lazily."""
from .base import DEFAULT_KEYS, FieldRef, RunRecord, TrackerError, parse_field_ref, records_to_table

__all__ = ["DEFAULT_KEYS", "FieldRef", "RunRecord", "TrackerError", "parse_field_ref", "records_to_table"]
