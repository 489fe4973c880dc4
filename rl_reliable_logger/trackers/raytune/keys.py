"""The default keys of a Ray Tune experiment, declared once for ``raytune_table`` and ``rl-reliable raytune``.

Light on purpose (no Ray, no pandas): the command's ``--help`` reads them.
"""

#: Ray's step counter of a reported result (the learning curve's x axis by default).
DEFAULT_STEP = "training_iteration"
#: Where each trial's config keeps the algorithm, the task and the seed, in Ray's flattened notation.
DEFAULT_KEYS = {"algorithm": "config/algorithm", "task": "config/task", "seed": "config/seed"}
