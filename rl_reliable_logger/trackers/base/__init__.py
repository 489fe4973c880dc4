"""What every tracker shares: run records, field references, records -> ScoreTable."""
