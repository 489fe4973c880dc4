"""Tracker adapters: W&B and MLflow sources and sinks behind one contract (see ``base``).

Each tracker's client (``wandb``, ``mlflow``) is imported only inside the adapter that needs it.
"""
