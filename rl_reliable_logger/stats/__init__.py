"""Pure statistics: numpy/scipy arrays in, arrays out. Knows no ScoreTable, no tracker."""
