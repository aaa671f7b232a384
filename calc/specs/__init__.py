"""Specifications, as data with their sources: models from their config.json (models, repositories),
cards from their datasheets (cards), number formats (precision, formats), the pinned engine release's
defaults from its own code (release), the tokenizer's measured counts (token_counts), and the system
served, the reference stack (stack)."""
