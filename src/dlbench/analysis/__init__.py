"""Records to answers: collect, statistics, tables, plots, the equivalence
verdicts, machines, published figures, speed-ups, abstraction cost,
utilisation, cold starts, hidden settings, imported results.

Imports: catalog, environments, models, plan, record. Never run: what a run
wrote reaches the analysis through its record."""
