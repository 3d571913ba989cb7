"""Specs: the plain data every layer shares. No logic beyond derived labels, no I/O."""

from wizard.specs.gpu import GpuSpec
from wizard.specs.price import GpuPrice, ManagedPrice
from wizard.specs.model import (
    FULL,
    LINEAR,
    SLIDING,
    ExactWeights,
    LinearAttentionSpec,
    MlaSpec,
    ModelSpec,
    MoeSpec,
    QuantSpec,
    VisionEncoderSpec,
)

__all__ = [
    "FULL",
    "LINEAR",
    "SLIDING",
    "ExactWeights",
    "GpuPrice",
    "GpuSpec",
    "ManagedPrice",
    "LinearAttentionSpec",
    "MlaSpec",
    "ModelSpec",
    "MoeSpec",
    "QuantSpec",
    "VisionEncoderSpec",
]
