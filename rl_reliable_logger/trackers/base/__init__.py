"""What every tracker shares: run records and field references (``records``), what a Source is asked for
(``request``), run selection (``selection``), the Source/Sink protocols and ``PublishResult`` (``protocols``),
what a tracker plugin declares (``plugin``), the publishing rules (``publishing``: content hash, headline keys,
run names, source-run checks) and option names in messages (``messages``)."""
