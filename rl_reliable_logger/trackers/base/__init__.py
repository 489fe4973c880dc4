"""What every tracker shares: run records and field references (``records``), run selection
(``selection``), the Source/Sink protocols and ``PublishResult`` (``protocols``), the publishing rules
(``publishing``: content hash, headline keys, run names, source-run checks) and option names in
messages (``messages``)."""
