"""The one writer of files: every file or folder the package writes goes through here.

A results bundle, a plan, the state folder of a watch or a race, a score table, a pending score, an offline publish
record: each is a registered kind (:mod:`.kinds`), written atomically under a lock and, for a folder, sealed with a
manifest and swapped in whole; a writer killed at any step is completed or undone by the next writer or reader.

The modules, each one job:

* :mod:`.kinds`: every kind the package writes (:data:`~.kinds.WRITERS`) and :class:`~.kinds.BundleError`;
* :mod:`.encode`: the bytes of a file (CSV escaped for spreadsheets, YAML with names quoted, shell lines);
* :mod:`.disk`: creating, flushing and reading a file without following links;
* :mod:`.lock`: the write lock of a folder or file (:func:`~.lock.folder_lock`);
* :mod:`.steps`: the steps of a write and the hook a test kills a writer at (:data:`~.steps.fault_hook`);
* :mod:`.manifest`: the manifest of a bundle, and verifying a folder against it;
* :mod:`.bundle`: writing, reading and guarding a bundle folder, and recovering a killed writer's swap;
* :mod:`.files`: replacing one file atomically, and a private folder a Sink uploads from.

The store knows files, not reports: a bundle's content hash is given to it (``digest=``; a Report's is
:func:`rl_reliable_logger.analysis.hashing.report_hash`). It imports only the standard library, ``errors``,
``version`` and, for the CSV escaping whose undoing ``data/`` reads with, :mod:`..data.csvcells`; nothing in
``data/`` imports it.
"""
