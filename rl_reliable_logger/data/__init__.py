"""The data model: ScoreTable (validated per-run scores) and normalisation. No statistics here."""
