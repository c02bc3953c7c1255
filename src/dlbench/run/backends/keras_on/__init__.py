"""Each framework's own code under Keras, one module per framework, named
after it: ``tensorflow``, ``jax``, ``torch`` and ``openvino`` under Keras 3
(picked by ``keras_adapter.KERAS_ON``), ``theano``, ``cntk`` and ``mxnet``
under Keras 2 (``keras2_adapter.KERAS_ON``). The adapters keep what every
framework shares; this package imports none of its modules (each adapter
imports its own). Importable on Python 3.6: a module imports its framework
inside its functions only, after the harness pinned the threads.

Every module provides::

    setup(adapter, threads, seed)      before Keras is imported: the
                                       framework's threads, seed and caches;
                                       what it applied goes to adapter.applied
    versions(framework) -> dict        what the record's versions add to the
                                       framework's own (CUDA, cuDNN; {}: none)
    read_manifest(adapter, threads) -> dict
                                       the hidden settings (dlbench.run.manifest),
                                       read back when the record is written

and, where the framework has one (the adapter does without it otherwise)::

    distribute(adapter, devices)       data-parallel training on ``devices``
                                       (without it a run on devices is refused)
    one_device(adapter)                one device, no distribution: see that it is there
    set_hidden_settings(adapter)       Keras 3, after Keras' import: the hidden
                                       settings as the run asks
    built(adapter, model)              Keras 3, after the build: what it records or wraps
    own_rules(adapter, model, optimizer_name) -> [rule]
                                       where it computes other than Keras 3 on
                                       JAX and torch (the record's own_rules)
    epoch_begins(adapter)              before each training epoch
    initial_weights(layout, weights) -> weights
                                       the shared initial weights in its layout
    compile_settings(adapter) -> dict  Keras 2: compile()'s own arguments
    training_phase(adapter)            Keras 2: a context manager around
                                       training_outputs' training-mode passes
    recurrent_kernel(name, devices) -> str
                                       Keras 3: what its own GRU/LSTM ("gru",
                                       "lstm") computes with (keras_kernels)
    probe_recurrent_paths(adapter, name) -> bool
                                       Keras 3: probes that record the path its
                                       GRU/LSTM took; False where it has none
    prepare_check(adapter, model, hyper), recurrent_ops(adapter, model, x),
    replica_divergence(adapter, model), synchronize(adapter), close(adapter)
                                       the adapter method of that name
                                       (dlbench.run.backends.base), its own way

and the constants, where they differ from the default::

    KERAS_PRECISION = False            the precision is not Keras' dtype policy
    UNROLL_RECURRENT = True            Keras 2: recurrent layers unrolled
    KERAS2_OPTIMIZERS = False          Keras 2: the optimizers are the framework's
"""
