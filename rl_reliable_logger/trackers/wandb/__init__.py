"""The wandb adapter: source, sink and final-score logging (the wandb client is imported lazily)."""
