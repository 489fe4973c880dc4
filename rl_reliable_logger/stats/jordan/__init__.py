r"""Jordan et al. (ICML 2020) evaluation: performance percentiles, the equilibrium aggregate, PBP.

Pure numpy/scipy. The specification is ``specs/jordan2020.md`` (section numbers below refer to it);
``docs/jordan.md`` explains the methods for users. Everything here works on plain arrays:
``samples[i][j]`` is the 1-D array of scores of algorithm ``i`` on environment (task) ``j``.

Pipeline
--------
1. Payoffs ``mu[i, j, k] = E[F_kj(X_ij)]`` (how often algorithm ``i`` on task ``j`` reaches a score at
   least as good as algorithm ``k``), estimated from empirical CDFs (:func:`payoff_matrix`).
2. A two-player zero-sum game: player *p* picks an algorithm ``i``; player *q* picks a task and a
   normalising algorithm ``(j, k)``. Its saturated, alpha-Rank-like response chain ``C`` over the
   ``|S| = nA**2 * nE`` joint strategies (:func:`transition_matrix`), damped like PageRank with
   ``gamma = 1 - 1/|S|``, has stationary distribution
   ``pi^T = (1-gamma)/|S| * 1^T (I - gamma C)^{-1}`` (:func:`stationary_distribution`, one linear solve).
3. The aggregate ``y_i = sum_{j,k} sigma_q(j, k) mu[i, j, k]`` (:func:`equilibrium`).
4. Confidence intervals on ``y`` holding for all algorithms at once: PBP (DKW bands with Massart's
   constant + Anderson's inequality + an optimisation over the interval transition matrices,
   :func:`pbp_payoff_bounds`, :func:`interval_chain`, :func:`optimise_aggregate`), PBP-t
   (:func:`pbpt_payoff_bounds`) and the percentile bootstrap (:func:`bootstrap_aggregate`, drawn by the shared
   engine of :mod:`rl_reliable_logger.stats.bootstrap`).
   :func:`jordan_evaluate` runs the whole thing.

State layout: the state ``s = (i, j, k)`` has flat index ``(i * nE + j) * nA + k`` (C order of an
``(nA, nE, nA)`` array), so ``mu.ravel()`` is the payoff of player *p* in every state. The spec notes the
order is irrelevant (tested). Neighbours are stored as an ``(|S|, M)`` index array with
``M = 1/eta + 1`` slots per state (``nA - 1`` *p*-deviations, ``nA*nE - 1`` *q*-deviations, the state
itself last), so the chain and the policy-iteration steps are vectorised over states.

Ambiguity resolutions (spec section 9) -- the defaults are the principled choices; the authors'
behaviour is available for parity and is tested against the spec's vectors T0/T1/T2:

Q1  Self-normalisation. ``mu[i, j, i]`` is fixed at exactly 1/2 with a zero-width interval, as in the
    authors' code (and the true value for continuous scores). Under the "<=" ECDF the true value is
    ``1/2 + P(tie)/2`` for scores with atoms; the aggregate is *defined* with 1/2 here, so every interval
    targets that definition. Not configurable.
Q2  The authors' "samedef" hack (treating pairs of algorithms as identical on some environments) is
    not ported.
Q3  Support ``[a_j, b_j]``. PBP needs known score bounds for every task. ``support=`` takes the
    user's bounds (one pair for all tasks or one per task; scores outside them are an error). Without
    them the pooled observed min/max per task is used, as in the authors' code, and a warning says the
    guarantee is then only approximate.
Q4  ECDF ties. ``F(x) = P(X <= x)`` (right-continuous), the paper's definition; a tied score counts as
    "reached", so ``mu_ijk + mu_kji = 1 + P(tie)``. Point payoffs are computed from integer counts as
    ``count / (n_ij * n_kj)`` (a correctly rounded division), so equal rational values give bitwise
    equal floats and ties in the chain are exact, not at the mercy of summation order.
Q5  Ties in the chains. Point chain: as in the code, the strict ``>`` test comes first, then Julia's
    ``isapprox`` (``|a-b| <= sqrt(eps) * max(|a|, |b|)``) gives ``eta/m``. Interval chain:
    ``tie_rule="strict"`` (default) fixes an edge at ``eta/m`` only when both payoff intervals are
    degenerate and approximately equal (exactly known ties), and fixes an edge at 0 only when the
    order is certain *and* not within the ``isapprox`` tolerance (so the true chain is always inside the
    relaxation, Thm 1). ``tie_rule="authors"`` fixes identical (possibly wide) intervals at ``eta/m``,
    which is not a valid relaxation (spec T1: 0.0156/0.9844 strict vs 0.0216/0.9784 authors).
Q6  Sign of the minimum. ``min_sign="signed"`` (default) returns the signed optimum
    ``-(1-gamma) mean(V)``; ``min_sign="abs"`` reproduces the code's ``(1-gamma) mean(|V|)`` (applied to
    both ends, as in the code). They differ only when the reward can be negative (PBP-t).
    PBP-t payoff intervals are not clipped to ``[0, 1]`` by default (the method as published);
    ``clip_t=True`` intersects them with ``[0, 1]``, which can only help coverage since every payoff
    lies in ``[0, 1]``.
Q7  PBP-t split of delta: ``t_split="cells"`` (default; the notebook and Table 1: ``delta/(nA*nE)``),
    ``"pairs"`` (``bounds_test.jl :TTest``: ``delta/(nA**2*nE)``) or ``"means"``
    (``delta/(nA*(nA-1)*nE)``, a Bonferroni over every estimated mean). PBP-t is not a valid union bound
    under any split (it ignores the uncertainty of the normalising CDF); the documentation says so.
Q8  Bootstrap level. ``bootstrap_split="cells"`` (default, the code and Table 1: each algorithm's
    percentile interval at level ``1 - delta/(nA*nE)``) or ``"algorithms"`` (Bonferroni over the ``nA``
    intervals, ``delta/nA``, the smallest split that targets the joint statement). The default keeps the
    published method: the equilibrium aggregate is a discontinuous function of the payoffs (the chain
    changes when two payoffs swap order), the percentile bootstrap under-covers near such swaps (spec
    Table 2: 6-11% failures at delta = 0.05), and the extra split partly compensates (see
    ``benchmarks/coverage/jordan_coverage.py``).
Q9  Failure rate in simulations: ``benchmarks/coverage/jordan_coverage.py`` measures coverage against the *true*
    aggregate of known distributions (the principled definition) and also reports the authors'
    cross-trial rate for comparison.
Q10 Optimisation over the uncertainty set: exact policy iteration, deterministic. The greedy row is the
    exact fractional knapsack; since every uncertain off-diagonal slot has capacity ``eta`` and the
    diagonal's capacity is the row's whole free mass, it reduces to "``eta`` to every uncertain neighbour
    whose value beats the state's own, the rest to the diagonal" (no sort; ties go to the diagonal,
    instead of the code's random jitter; equal objective, tested against the sorted knapsack). A row only
    changes when that improves its greedy value by more than ``1e-11 * max(1, |V|)``; the loop stops
    when no row does (cap: ``max_iter=400``); on the structured path (above ``DENSE_MAX_STATES`` states) every row
then takes its greedy row, each at least as good. The reported bound adds the certified slack
    ``max_s (T V - V)(s)`` (Bellman residual), so stopping early or round-off can only widen it.
Q11 Unequal ``n_ij``: each distribution's DKW ``eps`` uses its own ``n``; the normaliser's band uses
    ``eps_kj`` and Anderson's bound uses ``eps_ij`` (as in the code).
Q12 The aggregate weights the payoffs by ``sigma_q`` only (paper eq. 2); ``sigma_p`` is returned for
    information.

Performance. The chain is built from the ``(|S|, M)`` neighbour array without loops over states. Up to
``DENSE_MAX_STATES`` (600) states a single chain is solved densely; above that, the point equilibrium uses the
structured solver of :mod:`.solver` and PBP's policy iteration never forms an ``(|S|, M)`` array (700 MB each at 50
algorithms x 26 tasks): :mod:`.pairs` lists the few edges of the interval chain that are not uncertain,
:mod:`.groups` sorts each neighbour group by value once per policy, so a product with the policy's matrix is a
prefix sum (:mod:`.policy`), and each evaluation is GMRES preconditioned by an exact solve of player *q*'s part
(:mod:`.precondition`), about 10 iterations. The loop switches whole greedy policies while some row gains more
than the tolerance below (Q10), so each policy is the greedy policy of one value vector. 50 algorithms x 26 tasks
(65,000 states) take about a minute serially, growing about as nA^2-nA^3
(``benchmarks/speed/bench_scale_jordan.py``); the ``2 nA`` optimisations are units of the ``executor=`` seam (serial or
Ray, same numbers). Narrow intervals (hundreds of runs per cell) make many edges certain: they are exact in the
operator but not in the preconditioner, so GMRES needs more iterations there. The bootstrap
solves a whole chunk of replicate chains at once with the structured solver of :mod:`.solver`
(sorted-payoff recurrences for player *q*'s moves, aggregation-disaggregation sweeps for player *p*'s, in
numpy): 10,000 replicates at the paper's size (nA = 11, nE = 15, |S| = 1815)
take about 30 s of CPU instead of about 4 minutes (``benchmarks/speed/bench_jordan.py``).

Other choices. A single algorithm has aggregate 1/2 by definition (degenerate interval). Ranks follow
the spec's formulas, with the algorithm itself excluded from the "certainly better/worse" counts so a
degenerate interval cannot push its own best rank down, and comparisons ignore differences below
``1e-12`` so equal aggregates share a rank despite round-off. The DKW band of the quantile plots uses
``delta/(nA*nE)`` so all bands hold at once.

Modules: :mod:`.ecdf` (ECDFs, DKW, supports, percentiles), :mod:`.payoffs`, :mod:`.chain` (structure,
transition matrix, one-chain solver), :mod:`.point` (equilibrium), :mod:`.solver` (batched stationary
distributions), :mod:`.bounds` (PBP, PBP-t, interval chain, policy iteration), :mod:`.pairs`, :mod:`.groups`,
:mod:`.policy`, :mod:`.precondition` (the structured policy evaluation), :mod:`.bootstrap`, :mod:`.api`
(:func:`jordan_evaluate`, ranks). Everything public is re-exported here.
"""

from __future__ import annotations

from .api import JordanResult, jordan_evaluate, ranks
from .bootstrap import bootstrap_aggregate
from .bounds import (
    IntervalChain,
    aggregate_bounds,
    anderson_mean_bounds,
    interval_chain,
    optimise_aggregate,
    pbp_payoff_bounds,
    pbpt_payoff_bounds,
)
from .chain import (
    DENSE_MAX_STATES,
    ChainSolver,
    ChainStructure,
    chain_structure,
    power_iteration,
    stationary_distribution,
    transition_matrix,
)
from .ecdf import (
    DEFAULT_DELTA,
    POPULATION_M,
    as_samples,
    dkw_epsilon,
    ecdf,
    percentile_scores,
    quantile_bands,
    resolve_support,
)
from .payoffs import payoff_matrix, payoffs_from_counts
from .point import Equilibrium, equilibrium
from .solver import stationary_batch

__all__ = [
    "DEFAULT_DELTA",
    "POPULATION_M",
    "ecdf",
    "dkw_epsilon",
    "as_samples",
    "resolve_support",
    "payoff_matrix",
    "payoffs_from_counts",
    "ChainStructure",
    "chain_structure",
    "transition_matrix",
    "stationary_distribution",
    "stationary_batch",
    "power_iteration",
    "ChainSolver",
    "DENSE_MAX_STATES",
    "Equilibrium",
    "equilibrium",
    "percentile_scores",
    "anderson_mean_bounds",
    "pbp_payoff_bounds",
    "pbpt_payoff_bounds",
    "IntervalChain",
    "interval_chain",
    "optimise_aggregate",
    "aggregate_bounds",
    "bootstrap_aggregate",
    "ranks",
    "quantile_bands",
    "JordanResult",
    "jordan_evaluate",
]
