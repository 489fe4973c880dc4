"""What ``rl-reliable sb3`` knows before reading anything (no numpy: ``rl-reliable --help`` imports it)."""

#: rl-baselines3-zoo's layout: ``logs/ppo/CartPole-v1_1``.
DEFAULT_LAYOUT = "{algorithm}/{task}_{seed}"
#: What ``--score-key`` chooses from: the quantities SB3 logs per episode.
QUANTITIES = ("return", "success", "length")
