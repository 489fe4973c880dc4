"""The ``rl-reliable`` command line: wiring only (parser, shared options, subcommands)."""
