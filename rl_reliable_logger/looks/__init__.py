"""The looks: ``watch()``, ``race()`` and ``gate()``, each the next look of a sequential design at a
sweep's runs, recorded in a state folder.

* :mod:`.ledger`: the state folder of every kind of look (:class:`~.ledger.Ledger`: the frozen design and every
  look, read, checked and written by the same functions) and :func:`~.ledger.next_look`, the one way a look is taken
  against it (locked from reading the state to writing it back; a changed design refused; a replay writes nothing);
* :mod:`.watch` (``watch()``, the :data:`~.watch.WATCH` ledger), :mod:`.race` (``race()``, :data:`~.race.RACE`) and
  :mod:`.gate` (``gate()``, :data:`~.gate.GATE`: a research loop's candidates, one stream per folder);
* :mod:`.launch`: what each launcher runs next (``runs.csv`` and each registered launch format's files);
* :mod:`.launch_formats`: the registry of launch formats, filled by the tracker registry (imports nothing heavy:
  ``rl-reliable --help`` loads it).

The look itself is computed in ``analysis/`` (:mod:`..analysis.watch`, :mod:`..analysis.race`, their shared checks
in :mod:`..analysis.look_checks`, :mod:`..analysis.gate`); the files go through the one writer,
:mod:`rl_reliable_logger.store`. The public entry points are ``rl_reliable_logger.watch``, ``race`` and ``gate``.
"""
