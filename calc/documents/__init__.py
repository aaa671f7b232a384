"""Each document's own figures, on top of the engine: what a page shows that no other layer reuses
(04 to 06's phases, 01's tokens, 03's journey, 07's attention, 08's position, 09's formats, 12's
adapters, 00's start, 14's plan, 15's production). The registry (calc.facts) names them."""
