"""Pure statistics: numpy/scipy (and optional numba) arrays in, arrays out. Knows no ScoreTable, no tracker."""
