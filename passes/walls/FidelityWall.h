//===- FidelityWall.h - Wall 13: quantization cost and benefit --*- C++ -*-===//
#ifndef MLSC_PASSES_WALLS_FIDELITYWALL_H
#define MLSC_PASSES_WALLS_FIDELITYWALL_H

#include "ir/Graph.h"
#include "ir/Quantities.h"

namespace mlsc::walls {

/// Weight bytes at a precision of `Bits` per weight plus one scale of
/// `ScaleBits` per group: N * (bits + scale_bits / group) / 8. Frantar et al.,
/// GPTQ, ICLR 2023 (group-wise quantization).
q::Bytes quantizedWeightBytes(q::Number Params, q::Number Bits,
                              q::Number GroupSize, q::Number ScaleBits);

/// Step speedup from quantization: bytes ratio when memory-bound; peak ratio
/// when compute-bound, 1 if the device has no quantized peak (zero).
/// Williams et al., CACM 2009; Micikevicius et al., arXiv 2209.05433.
q::Number quantizationSpeedup(q::Bytes BaselineBytes, q::Bytes QuantizedBytes,
                              q::FlopRate BaselinePeak,
                              q::FlopRate QuantizedPeak,
                              q::Number ComputeBound);

/// Accuracy change from quantization: a sourced measurement, passed through
/// unchanged (no formula predicts it). Frantar et al., GPTQ, ICLR 2023.
q::Number accuracyDelta(q::Number Measured);

extern const Formula QuantizedWeightBytesF, QuantizationSpeedupF,
    AccuracyDeltaF;

} // namespace mlsc::walls

#endif
