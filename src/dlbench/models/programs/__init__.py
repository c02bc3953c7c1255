"""What a user of each framework writes around a model: the programs whose
lines the lines-of-code table counts (dlbench.models.lines), and the code the
adapters run and time (dlbench.run.backends).

One module per framework family, ``in_<family>.py`` (``in_keras.py`` serves
every Keras backend, Keras 2 and 3), as each workload has one module per
family. The model itself is the workload's ``build``; a program holds the
rest of a plain user program at the benchmark's settings:

``train_epoch``
    One epoch over the batches in the order given: the loss, its gradients
    and the optimizer's update for each batch (or Keras' ``fit``), returning
    the epoch's loss and correct predictions as the framework gives them.
    Where the program has a step of its own before the epoch (Keras'
    ``compile_model``), the module's ``TRAINING`` names it beside ``train_epoch``.
``predict``
    The inference call on one batch.
``TRAINING``, ``INFERENCE``
    The functions each task calls: the lines counted are theirs and those
    of every function of the module they call.

What only the benchmark needs stays in the adapters: timers, first-step and
compile counting, data parallelism, launchers, probes, records, and turning
the config's settings into the framework's (the optimizer is made from the
config's names by the family's ``dlbench.models.layers`` helper: one call in
every framework, not counted). Where a dimension changes what a step does
(mixed precision's loss scaling, a data-parallel all-reduce), the program
takes that piece as an argument whose default is the plain program's.

Importable on Python 3.6: the framework is passed in, never imported.
"""
