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

/// Stored bytes per original weight after pruning a fraction s of them:
/// N:M structured (2:4) keeps a 2-bit index per kept value,
/// (1 - s) * (b + 0.25 B) (Mishra et al., Accelerating Sparse Deep Neural
/// Networks, arXiv 2104.08378); unstructured keeps a 1-bit-per-weight
/// bitmap, (1 - s) * b + 0.125 B. Structured is 1 or 0.
q::Bytes prunedBytesPerParam(q::Bytes BytesPerParam, q::Number Sparsity,
                             q::Number Structured);

/// The factor pruning applies to GEMM time: max(1 - s, 1 / speedup) when
/// the pruning is structured and the device's sparse tensor cores speed it
/// up (speedup > 1), else 1: unstructured zeros are still multiplied.
/// Mishra et al., arXiv 2104.08378.
q::Number sparseGemmTimeFactor(q::Number Sparsity, q::Number Structured,
                               q::Number SparseSpeedup);

extern const Formula PrunedBytesPerParamF, SparseGemmTimeFactorF;
extern const Formula QuantizedWeightBytesF, QuantizationSpeedupF,
    AccuracyDeltaF;

} // namespace mlsc::walls

#endif
