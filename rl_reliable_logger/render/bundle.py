"""Moved: the one writer is :mod:`rl_reliable_logger.store` (its files, not Reports), and a Report's content hash
:mod:`rl_reliable_logger.analysis.hashing`. The old names here warn and forward for one release."""

from __future__ import annotations

from ..moved import moved

_STORE = "rl_reliable_logger.store"
__getattr__ = moved(
    __name__,
    {
        **dict.fromkeys(("BundleError", "Writer", "WRITERS", "KINDS"), f"{_STORE}.kinds"),
        **dict.fromkeys(
            ("MANIFEST", "FORMAT", "FORMAT_VERSION", "Bundle", "BundleFile", "safe_relpath"), f"{_STORE}.manifest"
        ),
        **dict.fromkeys(("read_bundle", "write_bundle", "check_output_folder", "recover_swap"), f"{_STORE}.bundle"),
        **dict.fromkeys(("csv_bytes", "Text", "yaml_bytes", "shell_line", "encode"), f"{_STORE}.encode"),
        **dict.fromkeys(("write_file", "write_private"), f"{_STORE}.files"),
        **dict.fromkeys(("BUNDLE_STEPS", "FILE_STEPS", "fault_hook"), f"{_STORE}.steps"),
        **dict.fromkeys(("LOCK_WAIT", "folder_lock"), f"{_STORE}.lock"),
        **dict.fromkeys(("report_hash", "hash_matches", "TRACKER_COLUMNS"), "rl_reliable_logger.analysis.hashing"),
    },
)
