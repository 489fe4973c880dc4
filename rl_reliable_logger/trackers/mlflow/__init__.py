"""The mlflow adapter: source, sink and final-score logging (the mlflow client is imported lazily)."""
