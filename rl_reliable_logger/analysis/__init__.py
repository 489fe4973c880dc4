"""``evaluate()``: a ScoreTable and options in, the complete Report out."""
