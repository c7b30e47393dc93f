//===- Fidelity.cpp - Wall 13: quantization cost and benefit --------------===//
//
// What a lower precision buys and costs: the weight bytes at a precision
// (with group-wise scales), the speedup of a step, and the accuracy delta.
//
// Speedup: a memory-bound step moves fewer bytes, so it speeds up by
// bytes_base / bytes_quant (pass bytes per element when all traffic changes
// precision, or the bytes moved per step when only the weights do). This
// holds on devices without math at the quantized precision too, because
// weight-only kernels (e.g. Marlin on Ampere) dequantize on the fly. A
// compute-bound step speeds up by peak_quant / peak_base only when the
// device has that peak; a missing peak is passed as zero and gives 1. The
// regime is an input (ComputeBound is 1 or 0, as comparisons give in the
// graph): a step that quantization moves from memory- to compute-bound is
// the caller's to re-evaluate with the roofline.
//
// The accuracy delta is a leaf: a published measurement for the model, the
// method and the precision. The formula only tags it with this wall so that
// `explain` and `audit` show it as the fidelity cost. Known answers:
// test/unit/FidelityTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <algorithm>

namespace mlsc::walls {

using namespace q;

namespace {
const Bytes OneByte = in<Bytes>(1.0);
} // namespace

Bytes scaledElementBytes(Bytes ElementBytes, Number ScaleBits, Number Group) {
  return ElementBytes + ScaleBits / (8.0 * Group) * OneByte;
}

Bytes quantizedWeightBytes(Number Params, Number Bits, Number GroupSize,
                           Number ScaleBits) {
  // Per-tensor or per-channel scales are passed as ScaleBits = 0.
  Number ScaleOverhead =
      ScaleBits.value() > 0.0 ? ScaleBits / GroupSize : in<Number>(0.0);
  return Params * (Bits + ScaleOverhead) / 8.0 * OneByte;
}

Number quantizationSpeedup(Bytes BaselineBytes, Bytes QuantizedBytes,
                           FlopRate BaselinePeak, FlopRate QuantizedPeak,
                           Number ComputeBound) {
  if (ComputeBound.value() == 0.0)
    return BaselineBytes / QuantizedBytes;
  if (QuantizedPeak.value() <= 0.0)
    return in<Number>(1.0);
  return QuantizedPeak / BaselinePeak;
}

Number accuracyDelta(Number Measured) { return Measured; }

Bytes prunedBytesPerParam(Bytes BytesPerParam, Number Sparsity,
                          Number Structured) {
  Number Kept = 1.0 - Sparsity;
  if (Structured.value() != 0)
    return Kept * (BytesPerParam + 0.25 * OneByte);
  return Kept * BytesPerParam + 0.125 * OneByte;
}

Number sparseGemmTimeFactor(Number Sparsity, Number Structured,
                            Number SparseSpeedup) {
  if (Structured.value() == 0 || SparseSpeedup.value() <= 1)
    return in<Number>(1.0);
  return in<Number>(
      std::max(1.0 - Sparsity.value(), 1.0 / SparseSpeedup.value()));
}

} // namespace mlsc::walls
