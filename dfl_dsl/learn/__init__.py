"""Decision-focused learning: oracle, losses, metrics, predictors, layers, trainer."""
