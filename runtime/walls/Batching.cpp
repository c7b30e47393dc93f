//===- Batching.cpp - Wall 5: paged KV cache and batching -----------------===//
//
// How many sequences fit and how many should run: the paged KV cache
// (PagedAttention), the concurrency free memory allows, static against
// continuous batching, and the batch that maximises throughput under a TPOT
// limit.
//
// Static against continuous batching: both run B sequences per step at the
// same step time, and prefill is left out. A static batch keeps its slots
// until its longest sequence ends, so it emits B * mean_out tokens in
// max_out steps; continuous batching (Orca's iteration-level scheduling)
// refills a slot the step after it frees, emitting B tokens per step, which
// is ComputeWall's decodeThroughput. The gain is max_out / mean_out.
//
// Batch under a TPOT limit: with f the FLOPs and m the KV bytes one
// sequence adds to a decode step, and peak and BW already scaled by their
// efficiencies, T(B) = max(B*f/peak, (W + B*m)/BW). Throughput
// B / T(B) = min(peak/f, B*BW/(W + B*m)) never falls as B grows, so the
// optimum is the largest B with T(B) <= TPOT, solved in closed form per
// regime: B <= TPOT*peak/f (compute) and B <= (TPOT*BW - W)/m (memory),
// capped by the memory capacity (maxConcurrentSequences).
// Known answers: test/unit/BatchingTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <algorithm>
#include <cmath>

namespace mlsc::walls {

using namespace q;

namespace {
/// A count of whole items that fit: the floor of a quotient of doubles,
/// which can land just below an exact integer (0.3 / 0.1 is
/// 2.9999999999999996); a relative 1e-12 absorbs that and no real shortfall.
double wholeItems(double Quotient) {
  return std::max(std::floor(Quotient * (1.0 + 1e-12)), 0.0);
}
} // namespace

Number kvBlocksPerSequence(Tokens Length, Tokens BlockSize) {
  return in<Number>(std::ceil((Length / BlockSize).value()));
}

Bytes pagedKVBytesPerSequence(Tokens Length, Tokens BlockSize, BytesPerToken KV,
                              Number TP) {
  return kvBlocksPerSequence(Length, BlockSize) * BlockSize * KV / TP;
}

Bytes kvBytesWastedPerSequence(Tokens Length, Tokens BlockSize,
                               BytesPerToken KV, Number TP) {
  return pagedKVBytesPerSequence(Length, BlockSize, KV, TP) - Length * KV / TP;
}

Number maxConcurrentSequences(Bytes DeviceMemory, Bytes Weights, Bytes Overhead,
                              Bytes KVPerSequence) {
  return in<Number>(wholeItems(
      ((DeviceMemory - Weights - Overhead) / KVPerSequence).value()));
}

TokenRate staticBatchThroughput(Number Batch, Tokens MeanOutput,
                                Tokens MaxOutput, Time DecodeStep) {
  return Batch * MeanOutput / (MaxOutput / OneToken * DecodeStep);
}

Number continuousBatchingGain(Tokens MeanOutput, Tokens MaxOutput) {
  return MaxOutput / MeanOutput;
}

Time batchedDecodeStepTime(Number Batch, Flops FlopsPerSequence, Bytes Weights,
                           Bytes BytesPerSequence, FlopRate Peak,
                           Bandwidth BW) {
  return std::max(Batch * FlopsPerSequence / Peak,
                  (Weights + Batch * BytesPerSequence) / BW);
}

Number maxBatchUnderTPOT(Time TPOTLimit, Flops FlopsPerSequence, Bytes Weights,
                         Bytes BytesPerSequence, FlopRate Peak, Bandwidth BW,
                         Number Capacity) {
  double ComputeBound =
      wholeItems((TPOTLimit * Peak / FlopsPerSequence).value());
  double MemoryBound =
      wholeItems(((TPOTLimit * BW - Weights) / BytesPerSequence).value());
  return in<Number>(
      std::min({ComputeBound, MemoryBound, wholeItems(Capacity.value())}));
}

} // namespace mlsc::walls
