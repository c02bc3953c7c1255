"""dlbench: a reproducible benchmark of Keras backends and native frameworks."""
