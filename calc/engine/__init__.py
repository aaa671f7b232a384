"""The engine layer: vLLM 0.33.0 as the runbook models it. Its memory accounting at start-up
(memory, over sharding; kvcache reads the ladder off it), the time a step takes (steptime, over kernels
and their measured data; timing), the scheduler and its simulation (batching, simulation, measured),
parallelism (parallel), cache operations (cacheops), sampling and speculation (sampling, speculative),
its launch flags (launch) and its start-up logs read and set beside the model (logs).
`python3 -m calc.engine` asks it from a shell."""
