"""Nothing listens yet."""
