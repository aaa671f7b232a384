"""The engine layer: the one vLLM release the runbook describes (release), its memory accounting at
start-up (memory, over sharding), the time a step takes (steptime, over kernels and their measured
data), and its start-up logs read and set beside the model (logs). `python3 -m calc.engine` asks it
from a shell."""
