"""The tables of a Report, one module each, every one a function of explicit inputs.

Each module's ``build(inputs, request, ...)`` takes what the tables share (:class:`.base.TableInputs`: the cells,
tasks, metrics, random streams and progress bar, read-only), the one :class:`~..stats.intervals.ResamplingRequest`
built from the options, the few options of its own and, where it needs them, another table's results (the
differences take the aggregates'), and returns a :class:`.base.Part`: its tables, its ``provenance["intervals"]``
record, other provenance and warnings. :func:`..evaluation.evaluate` calls them in order.
"""
