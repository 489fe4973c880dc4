"""The gate's statistics: keep or discard each candidate of a stream, the false-discovery rate held over all of them.

A research loop submits candidates one after another; each is compared with the current incumbent on paired seeds
(both run on the same fresh seeds: common random numbers). A candidate whose effect (candidate - incumbent) is at
most ``min_effect`` must not be kept; over the whole stream the expected share of such false keeps among the keeps
is at most ``alpha``. One module per job:

* :mod:`.paired`: the t statistic of a look's paired differences against ``min_effect``, and its normal scale;
* :mod:`.student`: the exact null law of a screened candidate's sequential t statistics, and its boundaries;
* :mod:`.candidate`: the plan of a candidate (screen, looks, futility) and the verdict of a look;
* :mod:`.online`: SAFFRON (and LORD++) levels over the stream's tests, with wealth earned back on keeps;
* :mod:`.stagewise`, :mod:`.estimate`: the estimate after the test ended, and the interval of a look;
* :mod:`.stream`: one look of the gate (the one decision function) and a replay of a whole stream.

**Why the guarantee holds** (the screen included):

1. *Each candidate that passed its screen is a test at its level, given the screen.* The stream gives it a level
   ``α_j`` that depends only on the candidates before it. Its looks after the screen keep it when its t statistic
   crosses the upper boundaries of :mod:`.student`, computed so that, at an effect of exactly ``min_effect`` and for
   normal differences with any variance, P(kept | passed the screen) = ``α_j`` exactly (the law of the t
   statistics does not depend on the variance; the looks spend ``α_j`` by an error-spending function, so the
   looks need not fall where planned). For a known variance the same holds for every effect below the margin
   (``stagewise``'s argument: crossing first is an increasing event of the path, and the screen's truncation
   and the drift both push the path up as the effect grows); with an estimated one, the tests and the study
   measure it.
2. *The screen is a selection, not a test.* A candidate discarded at its screen is never kept and spends
   nothing; the stream's tests are the candidates that passed. Candidates run on fresh seeds, so their data are
   independent: given which candidates passed, the passed ones' data are independent, each distributed as given
   its own screen. Define ``p_j`` as the smallest level at which candidate j's test (same screen, looks and
   futility) would keep it: the boundaries fall as the level rises and the screen and futility do not depend on
   it, so the tests are nested, ``{kept} = {p_j <= α_j}``, and by 1, ``P(p_j <= a | passed) <= a`` for every a.
   (ADDIS, Tian & Ramdas 2019, discards a test whose p-value exceeds τ and tests the rest with ``p / τ``: a
   conditional p-value given a selection. Here the selection is the screen on the first seeds, and the
   conditional test is computed exactly rather than by rescaling.)
3. *SAFFRON over the passed candidates* (Ramdas, Zrnic, Wainwright & Jordan 2018) then keeps the false-discovery
   rate at most ``alpha`` given which candidates passed (independent, super-uniform null p-values; a monotone
   rule), hence over the whole stream: a candidate that did not pass is never a false keep. Whether a passed
   candidate is a SAFFRON *candidate* (``p_j <= λ``, which costs no wealth) is known from its looks: it crossed
   the boundaries of level λ at one of them.

Not covered: candidates that reuse seeds (or runs) of earlier candidates (their data are then dependent), a stream
where a candidate is started before the last one ended, seed counts chosen by looking at the scores, differences far
from normal (measured: heavy tails and a failure mode make it conservative), and what the effect of a kept
candidate is (its estimate leans upward: :mod:`.estimate`).
"""
