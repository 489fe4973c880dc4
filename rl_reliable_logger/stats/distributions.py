"""Normal and Student-t quantiles and probabilities, imported from scipy only when a method needs them.

Why not ``scipy.stats`` at module level: importing it costs about 0.6 s (0.2-0.3 s for ``scipy.special``
alone), more than a whole small evaluation; the percentile path (no simultaneous intervals) needs no
distribution function, and the default (bootstrap-t) only ``scipy.special``'s quantiles. These are the very ``scipy.special`` routines that
``scipy.stats.norm`` and ``scipy.stats.t`` call, so the numbers are the same to the last bit (tested).

Example:
    >>> round(float(t_ppf(0.975, 9.0)), 4)
    2.2622
"""

from __future__ import annotations

import numpy as np


def norm_cdf(x: np.ndarray | float) -> np.ndarray:
    """Φ(x), the standard normal CDF (``scipy.stats.norm.cdf``)."""
    from scipy import special

    return special.ndtr(x)


def norm_ppf(q: np.ndarray | float) -> np.ndarray:
    """Φ⁻¹(q), the standard normal quantile (``scipy.stats.norm.ppf``)."""
    from scipy import special

    return special.ndtri(q)


def t_ppf(q: np.ndarray | float, df: np.ndarray | float) -> np.ndarray:
    """Quantile of Student's t with ``df`` degrees of freedom (``scipy.stats.t.ppf``)."""
    from scipy import special

    return special.stdtrit(df, q)
