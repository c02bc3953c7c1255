"""resnet50 in Keras (the workload: ``dlbench.models.workloads.resnet50``)."""


def build(keras, spec):
    """ResNet-50 without its classifier: global average pooling to 2048
    features. Random weights: they do not change the speed."""
    return keras.applications.ResNet50(
        include_top=False, weights=None, pooling="avg", input_shape=tuple(spec["input_shape"])
    )
