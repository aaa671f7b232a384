"""The model's own arithmetic, engine-free: parameters (anatomy), the memory weights hold (weights),
each operation's FLOPs and bytes (operations), the cache's shape per token (kvshape), adapters (lora),
a decode step's reads against a card's roofline (roofline), and one forward pass (forward)."""
