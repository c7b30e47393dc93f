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
// The running decode batch under load: continuous batching admits a request
// to a free slot at once, so a replica's slots hold L = lambda_r * S
// requests on average (Little's law), S a request's time in its slot. A
// request arriving with Poisson traffic sees that time average (PASTA), so
// its decode steps run at b = 1 + L sequences, itself and the others,
// capped by the slots B. S = T_fixed + (n - 1) * T(b) / (1 - f) grows with b
// through the step time (f: the share other requests' prefills take), so b
// is a fixed point of g(b) = min(B, 1 + lambda_r * S(b)). The step is
// T(u) = max(C(u), M(u)) + K(u) over the micro-batch u = b / min(pp, b),
// each part affine in u (FLOPs, KV bytes and messages grow linearly with
// the sequences; weights, latencies and fixed costs do not), so two
// lowered steps, at u = 1 and at the slot limit, give every coefficient.
// g is non-decreasing and convex where u grows, so g(b) - b has one root in
// [1, B] when g(B) < B: bisection finds it; otherwise the slots are full.
// An MoE step's weight read is concave in the tokens, so the chord between
// the two points under-states it in between.
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
/// A sequence's share of a decode step's attention, on its own roofline:
/// the slower of its FLOPs and its KV reads.
Time attentionPerSequence(Flops AttentionFlopsPerSequence,
                          FlopRate AttentionRate, Bytes BytesPerSequence,
                          Bandwidth BW) {
  return std::max(AttentionFlopsPerSequence / AttentionRate,
                  BytesPerSequence / BW);
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

Time batchedDecodeStepTime(Number Batch, Flops GemmFlopsPerSequence,
                           Flops AttentionFlopsPerSequence, Bytes Weights,
                           Bytes BytesPerSequence, FlopRate GemmRate,
                           FlopRate AttentionRate, Bandwidth BW) {
  // max(B f_attn / R_attn, B m / BW) = B a for B >= 0.
  return kernelClassRooflineTime(
      Batch * GemmFlopsPerSequence / GemmRate, Weights / BW,
      Batch * attentionPerSequence(AttentionFlopsPerSequence, AttentionRate,
                                   BytesPerSequence, BW),
      in<Time>(0));
}

Number maxBatchUnderTPOT(Time TPOTLimit, Flops GemmFlopsPerSequence,
                         Flops AttentionFlopsPerSequence, Bytes Weights,
                         Bytes BytesPerSequence, FlopRate GemmRate,
                         FlopRate AttentionRate, Bandwidth BW,
                         Number Capacity) {
  Time Attend = attentionPerSequence(AttentionFlopsPerSequence, AttentionRate,
                                     BytesPerSequence, BW);
  double ComputeBound = wholeItems(
      (TPOTLimit / (GemmFlopsPerSequence / GemmRate + Attend)).value());
  double MemoryBound =
      wholeItems(((TPOTLimit - Weights / BW) / Attend).value());
  return in<Number>(
      std::min({ComputeBound, MemoryBound, wholeItems(Capacity.value())}));
}

Number runningDecodeBatch(Time Gemm1, Time Weights1, Time Attention1, Time KV1,
                          Time Added1, Time GemmSlots, Time WeightsSlots,
                          Time AttentionSlots, Time KVSlots, Time AddedSlots,
                          Number Slots, Number PP, RequestRate Rate, Time Fixed,
                          Tokens Output, Number Interference) {
  const double B = Slots.value(), Stages = std::max(PP.value(), 1.0);
  const double Lambda = (Rate / in<Requests>(1.0)).value();
  const double F = Interference.value();
  const double Gaps = std::max((Output / OneToken).value() - 1.0, 0.0);
  // The step's parts at one sequence and at the slots.
  const double One[] = {Gemm1.value(), Weights1.value(), Attention1.value(),
                        KV1.value(), Added1.value()};
  const double AtSlots[] = {GemmSlots.value(), WeightsSlots.value(),
                            AttentionSlots.value(), KVSlots.value(),
                            AddedSlots.value()};
  for (double V :
       {One[0], One[1], One[2], One[3], One[4], AtSlots[0], AtSlots[1],
        AtSlots[2], AtSlots[3], AtSlots[4], B, Lambda, Fixed.value(), F})
    if (std::isnan(V))
      return in<Number>(std::nan(""));
  if (!(B > 1))
    return Slots;
  if (!(F < 1) || std::isinf(Lambda) || std::isinf(Fixed.value()))
    return Slots; // the slots never empty: prefills alone saturate them
  auto micro = [&](double Batch) {
    return Batch / std::max(1.0, std::min(Stages, Batch));
  };
  const double USlots = micro(B);
  auto part = [&](double One, double AtSlots, double U) {
    if (!(USlots > 1))
      return AtSlots;
    return One + (AtSlots - One) * (U - 1.0) / (USlots - 1.0);
  };
  auto g = [&](double Batch) {
    double U = micro(Batch);
    auto at = [&](int K) { return in<Time>(part(One[K], AtSlots[K], U)); };
    double Step =
        (kernelClassRooflineTime(at(0), at(1), at(2), at(3)) + at(4)).value();
    double InSlot = Fixed.value() + Gaps * Step / (1.0 - F);
    return std::min(B, 1.0 + Lambda * InSlot);
  };
  if (g(B) >= B)
    return Slots;
  double Lo = 1.0, Hi = B; // g(Lo) >= Lo, g(Hi) < Hi
  for (int I = 0; I < 200 && Hi - Lo > 1e-12 * Hi; ++I) {
    double Mid = 0.5 * (Lo + Hi);
    (g(Mid) >= Mid ? Lo : Hi) = Mid;
  }
  return in<Number>(0.5 * (Lo + Hi));
}

} // namespace mlsc::walls
