"""native-cudnn's calls (the cuDNN and cuBLAS API's names) to categories.
A descriptor's set-up queues no device work; it stays among the other ops."""

from dlbench.analysis.op_categories import (
    CONVOLUTION,
    ELEMENTWISE,
    MATMUL,
    NORMALISATION,
    POOLING,
)

OPS = (
    (r"^cudnnConvolution(Forward|Backward)", CONVOLUTION),
    (r"^cudnnPooling", POOLING),
    (r"^cudnnSoftmax|^cudnnBatchNormalization|^cudnnLRN", NORMALISATION),
    (r"^cudnn(Activation|AddTensor|OpTensor|ScaleTensor)", ELEMENTWISE),
    (r"^cublas.*gemm|^cublas.*Gemm", MATMUL),
)

EXAMPLES = {
    "cudnnConvolutionForward": CONVOLUTION,
    "cudnnPoolingForward": POOLING,
    "cudnnSoftmaxForward": NORMALISATION,
    "cudnnActivationForward": ELEMENTWISE,
    "cudnnAddTensor": ELEMENTWISE,
    "cublasSgemm_v2": MATMUL,
}
