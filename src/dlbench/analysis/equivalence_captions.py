"""The captions of the equivalence check's tables: how the steps and the
dropout draws are compared (``CAPTION``), and the predictions
(``PREDICTIONS_CAPTION``); the workflow's scripts fill in the settings."""

CAPTION = (
    "Each backend takes {steps} optimizer steps of the workload's batch from the shared initial "
    "weights on the same batches, without dropout, and records the loss on the first "
    "{samples} test samples before the first step (step 0) and after every step. The steps run "
    "under settings that make the frameworks' documented rule differences vanish, the same on "
    "every backend (check_settings): RMSprop's epsilon at {epsilon:g}, where "
    "frameworks add it under or after the square root (Adam keeps its own: where it goes moves "
    "a curve far less than the tolerance), and the float inputs moved by a seeded jitter of "
    "+-{jitter:g} so that no pre-activation is exactly 0 and no pooling window holds tied "
    "maxima; a framework that cannot take a setting runs the same rule written in its own ops, "
    "or densified gradients (check_settings says which). A curve is compared with the "
    "reference at every step; every backend is held to it, and one whose relative difference "
    "exceeds {tolerance:g} at some step DEPARTS at that step: it computes something else (an "
    "optimizer setting, a layer, a gradient). own_rules: where the timed runs compute by their "
    "framework's own rules. Step 0 compares the forward pass alone. Dropout: from the same "
    "weights, {draws} training-mode forward passes on the first {dropout_samples} test "
    "samples, each against the inference-mode pass: dropout_squared is the median over the "
    "draws of the mean squared difference (dropout's rate sets it), dropout_shift of the mean "
    "difference at the most likely output (dropout that is not inverted moves it). A backend "
    "whose first {first_draws} draws are all the same draws no dropout and stops: where most "
    "backends draw, it DEPARTS. Each drawing backend's draws are ranked against every other "
    "drawing backend's (Mann-Whitney, both statistics, Bonferroni-corrected); a backend that "
    "differs from more than half of them DEPARTS in its "
    "dropout draws. The chance that a backend with the same dropout as the others is flagged "
    "is at most {alpha:g}. dropout_p_value: the median of its comparisons' p-values."
)

PREDICTIONS_CAPTION = (
    "Predictions from the same weights: every inference run loads the workload's shared "
    "weights (trained once by the workflow on keras-torch where the workload names "
    "trained_weights, else the shared initial draw) and keeps its outputs on the first test "
    "batch, off the clock. Each run's outputs are compared with the reference ({reference}) of "
    "its workload and repeat, on every machine, device count and thread count: the largest "
    "difference over the largest reference output; beyond {tolerance:g} (float32 computed in "
    "another order stays far below) the run DEPARTS. classes_differing: the samples whose "
    "predicted class is not the reference's; classes_sha256: a checksum of the predicted "
    "classes. A run that could not load the weights is not compared, and says why."
)
