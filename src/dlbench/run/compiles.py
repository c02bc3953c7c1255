"""Compilations during a run, counted where the framework reports them, so
that an epoch that compiled again is told apart from steady state instead of
raising its median. JAX (Keras on JAX and native JAX) reports each XLA
backend compile to its monitoring listeners, with the function's name.
Importable on Python 3.6.
"""

JAX_BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"


class Counter(object):
    """Compiles so far: their number, seconds and function names."""

    def __init__(self, source):
        self.source = source
        self.seconds = 0.0
        self.functions = []

    def reading(self):
        return len(self.functions), self.seconds

    def since(self, reading):
        """(compiles, seconds, function names) after ``reading``."""
        count, seconds = reading
        return len(self.functions) - count, self.seconds - seconds, self.functions[count:]


def jax_counter():
    """A Counter fed by JAX's monitoring events, or None where this JAX has
    no listener for them."""
    try:
        from jax import monitoring
    except ImportError:
        return None
    counter = Counter("JAX monitoring: XLA backend compiles")

    def listen(event, duration, **details):
        if event == JAX_BACKEND_COMPILE:
            counter.seconds += duration
            counter.functions.append(str(details.get("fun_name", "?")))

    monitoring.register_event_duration_secs_listener(listen)
    return counter


def per_epoch(counter, readings):
    """The record's ``compiles`` block from each epoch's (compiles, seconds,
    names); None without a counter."""
    if counter is None:
        return None
    return {
        "source": counter.source,
        "per_epoch": [count for count, _, _ in readings],
        "seconds_per_epoch": [round(seconds, 4) for _, seconds, _ in readings],
        # the names of later epochs' compiles: what compiled again
        "functions_after_first_epoch": sorted(
            {name for _, _, names in readings[1:] for name in names}
        ),
    }
