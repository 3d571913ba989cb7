"""Specs: the plain data every layer shares. No logic beyond derived labels, no I/O."""

from wizard.specs.gpu import GpuSpec
from wizard.specs.price import GpuPrice, ManagedPrice
from wizard.specs.model import (
    CHUNKED,
    FULL,
    LINEAR,
    SLIDING,
    ExactWeights,
    IndexerSpec,
    LinearAttentionSpec,
    MlaSpec,
    ModelSpec,
    MoeSpec,
    QuantSpec,
    VisionEncoderSpec,
)

__all__ = [
    "CHUNKED",
    "FULL",
    "LINEAR",
    "SLIDING",
    "ExactWeights",
    "GpuPrice",
    "GpuSpec",
    "ManagedPrice",
    "IndexerSpec",
    "LinearAttentionSpec",
    "MlaSpec",
    "ModelSpec",
    "MoeSpec",
    "QuantSpec",
    "VisionEncoderSpec",
]
