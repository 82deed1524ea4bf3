"""Running episodes and evaluating populations."""
