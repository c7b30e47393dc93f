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
// T(u) = max(G(u) + (1 - o) W(u), W(u) + (1 - o) G(u)) + max(A(u), V(u))
// + K(u) over the micro-batch u = b / min(pp, b),
// each part affine in u (FLOPs, KV bytes and messages grow linearly with
// the sequences; weights, latencies and fixed costs do not), so two
// lowered steps, at u = 1 and at the slot limit, give every coefficient.
// o in [0, 1] (kernels.overlap) keeps each part convex in u, so
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
#include <limits>

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
                           FlopRate AttentionRate, Bandwidth BW,
                           Number Overlap) {
  // max(B f_attn / R_attn, B m / BW) = B a for B >= 0.
  return kernelClassRooflineTime(
      Batch * GemmFlopsPerSequence / GemmRate, Weights / BW,
      Batch * attentionPerSequence(AttentionFlopsPerSequence, AttentionRate,
                                   BytesPerSequence, BW),
      in<Time>(0), Overlap);
}

Number maxBatchUnderTPOT(Time TPOTLimit, Flops GemmFlopsPerSequence,
                         Flops AttentionFlopsPerSequence, Bytes Weights,
                         Bytes BytesPerSequence, FlopRate GemmRate,
                         FlopRate AttentionRate, Bandwidth BW, Number Capacity,
                         Number Overlap) {
  Time Attend = attentionPerSequence(AttentionFlopsPerSequence, AttentionRate,
                                     BytesPerSequence, BW);
  const Number Apart = 1.0 - Overlap;
  Time Gemm = GemmFlopsPerSequence / GemmRate;
  double ComputeBound = wholeItems(
      ((TPOTLimit - Apart * (Weights / BW)) / (Gemm + Attend)).value());
  double MemoryBound = wholeItems(
      ((TPOTLimit - Weights / BW) / (Apart * Gemm + Attend)).value());
  return in<Number>(
      std::min({ComputeBound, MemoryBound, wholeItems(Capacity.value())}));
}

namespace {
/// The step's parts (GEMM compute, weight read, attention compute, KV
/// traffic, added time) at a micro-batch, interpolated between one
/// sequence and the slots.
struct StepAt {
  Time Gemm, Weights, Attention, KV, Added;
  Number Overlap;
  Time step() const {
    return kernelClassRooflineTime(Gemm, Weights, Attention, KV, Overlap) +
           Added;
  }
};

/// A step's part at micro-batch u, on the chord between its value at one
/// sequence and at the slots' micro-batch (u = b / min(pp, b)).
struct Chord {
  double USlots;
  /// An MoE step's weight read is not affine in u: a micro-batch of u
  /// tokens reads the experts it touches, W(u) = W_always + c (1 - q^u), q
  /// = (1 - k / E)^imbalance (moe_weight_bytes_read); 0 for a dense model.
  double Q = 0;
  Chord(Number Slots, Number PP, Number WeightCurve = in<Number>(0))
      : USlots(micro(Slots.value(), std::max(PP.value(), 1.0))),
        Q(WeightCurve.value()) {}
  static double micro(double Batch, double Stages) {
    return Batch / std::max(1.0, std::min(Stages, Batch));
  }
  Time at(Time AtOne, Time Full, double U) const {
    if (!(USlots > 1))
      return Full;
    return AtOne + (Full - AtOne) * ((U - 1.0) / (USlots - 1.0));
  }
  /// The weight read at u: on the MoE curve through its two ends, or on
  /// the chord.
  Time weights(Time AtOne, Time Full, double U) const {
    if (!(USlots > 1) || !(Q > 0 && Q < 1))
      return at(AtOne, Full, U);
    double Span = Q - std::pow(Q, USlots);
    if (!(Span > 0))
      return at(AtOne, Full, U);
    return AtOne + (Full - AtOne) * ((Q - std::pow(Q, U)) / Span);
  }
  /// Every part of a step at u, between one sequence's and the slots'.
  StepAt step(const StepAt &One, const StepAt &Full, double U) const {
    return StepAt{at(One.Gemm, Full.Gemm, U),
                  weights(One.Weights, Full.Weights, U),
                  at(One.Attention, Full.Attention, U),
                  at(One.KV, Full.KV, U),
                  at(One.Added, Full.Added, U),
                  One.Overlap};
  }
};

/// The root of h(b) = g(b) - b in [Lo, Hi], h(Lo) >= 0 > h(Hi), given g
/// at both ends: false position with the Illinois rule (the end kept twice
/// has its h halved, so neither end stalls), bisecting when a step leaves
/// the bracket, until h is exactly 0 (g is linear between the kinks of its
/// roofline, so the first step often lands there) or the bracket is within
/// 1e-12 of the root.
template <typename Fn>
Number rootBelowDiagonal(Fn g, double Lo, double GLo, double Hi, double GHi) {
  double HLo = GLo - Lo, HHi = GHi - Hi;
  int Kept = 0; // -1: Hi was kept last time; +1: Lo was
  for (int I = 0; I < 200 && Hi - Lo > 1e-12 * Hi; ++I) {
    double X = Lo - HLo * (Hi - Lo) / (HHi - HLo);
    if (!(X > Lo && X < Hi))
      X = 0.5 * (Lo + Hi);
    double H = g(X) - X;
    if (std::isnan(H))
      return in<Number>(std::nan(""));
    if (H == 0)
      return in<Number>(X);
    if (H > 0) {
      Lo = X;
      HLo = H;
      if (Kept == -1)
        HHi *= 0.5;
      Kept = -1;
    } else {
      Hi = X;
      HHi = H;
      if (Kept == 1)
        HLo *= 0.5;
      Kept = 1;
    }
  }
  return in<Number>(0.5 * (Lo + Hi));
}

/// Solves b = min(B, 1 + lambda_r * (T_fixed + (n - 1) * T(u) / (1 - f)))
/// by bisection, where \p FixedAndShare gives T_fixed and f at a batch
/// from the step there (both constant without chunked prefill: then the
/// root is unique). With \p Scan > 0 the bracket is the first of Scan
/// geometric steps from 1 to B where g falls below the diagonal, so the
/// smallest root is found when there are several.
template <typename Fn>
Number solveRunningBatch(const StepAt &One, const StepAt &AtSlots, Number Slots,
                         Number PP, RequestRate Rate, Tokens Output,
                         Number WeightCurve, unsigned Scan, Fn FixedAndShare) {
  const double B = Slots.value(), Stages = std::max(PP.value(), 1.0);
  const double Lambda = (Rate / in<Requests>(1.0)).value();
  const double Gaps = std::max((Output / OneToken).value() - 1.0, 0.0);
  for (Time V :
       {One.Gemm, One.Weights, One.Attention, One.KV, One.Added, AtSlots.Gemm,
        AtSlots.Weights, AtSlots.Attention, AtSlots.KV, AtSlots.Added})
    if (std::isnan(V.value()))
      return in<Number>(std::nan(""));
  if (std::isnan(B) || std::isnan(Lambda))
    return in<Number>(std::nan(""));
  if (!(B > 1))
    return Slots;
  if (std::isinf(Lambda))
    return Slots;
  const Chord Part(Slots, PP, WeightCurve);
  // B once the slots never empty (f >= 1, or an infinite fixed time).
  auto g = [&](double Batch) {
    double U = Chord::micro(Batch, Stages);
    StepAt At = Part.step(One, AtSlots, U);
    auto [Fixed, F] = FixedAndShare(At, U);
    if (std::isnan(Fixed) || std::isnan(F))
      return std::nan("");
    if (!(F < 1) || std::isinf(Fixed))
      return B;
    double InSlot = Fixed + Gaps * At.step().value() / (1.0 - F);
    return std::min(B, 1.0 + Lambda * InSlot);
  };
  double Lo = 1.0, Hi = B;                       // g(Lo) >= Lo, g(Hi) < Hi
  double GLo = std::nan(""), GHi = std::nan(""); // g there, once known
  if (Scan > 0) {
    // Several roots are possible: the smallest one below which g stays
    // above the diagonal is the batch a replica settles at, filling from
    // empty. Scan a geometric grid for the first point below it.
    bool Found = false;
    for (unsigned K = 1; K <= Scan && !Found; ++K) {
      double At = K == Scan ? B : std::pow(B, double(K) / Scan);
      double V = g(At);
      if (std::isnan(V))
        return in<Number>(std::nan(""));
      if (V < At) {
        Hi = At;
        GHi = V;
        Found = true;
      } else {
        Lo = At;
        GLo = V;
      }
    }
    if (!Found)
      return Slots;
  } else {
    double AtB = g(B);
    if (std::isnan(AtB))
      return in<Number>(std::nan(""));
    if (AtB >= B)
      return Slots;
    GHi = AtB;
  }
  if (std::isnan(GLo))
    GLo = g(Lo);
  if (std::isnan(GLo))
    return in<Number>(std::nan(""));
  return rootBelowDiagonal(g, Lo, GLo, Hi, GHi);
}
} // namespace

Number runningDecodeBatch(Time Gemm1, Time Weights1, Time Attention1, Time KV1,
                          Time Added1, Time GemmSlots, Time WeightsSlots,
                          Time AttentionSlots, Time KVSlots, Time AddedSlots,
                          Number Slots, Number PP, RequestRate Rate, Time Fixed,
                          Tokens Output, Number Interference, Number Overlap,
                          Number WeightCurve) {
  const std::pair<double, double> Constant{Fixed.value(), Interference.value()};
  return solveRunningBatch(
      StepAt{Gemm1, Weights1, Attention1, KV1, Added1, Overlap},
      StepAt{GemmSlots, WeightsSlots, AttentionSlots, KVSlots, AddedSlots,
             Overlap},
      Slots, PP, Rate, Output, WeightCurve, /*Scan=*/0,
      [&](const StepAt &, double) { return Constant; });
}

Number runningDecodeBatchChunked(
    Time Gemm1, Time Weights1, Time Attention1, Time KV1, Time Added1,
    Time GemmSlots, Time WeightsSlots, Time AttentionSlots, Time KVSlots,
    Time AddedSlots, Number Slots, Number PP, RequestRate Rate, Tokens Output,
    Time Prefill, Tokens Prompt, Tokens Chunk, RequestRate OtherRate,
    Number Packed, Time HiddenGemm1, Time HidingWeights1, Time HiddenGemmSlots,
    Time HidingWeightsSlots, Time Carried, Number Overlap, Number WeightCurve) {
  // At each batch tried: a request's own chunks ride on steps of that
  // batch (chunked_prefill_time), and each other request's chunks add what
  // they take beyond the steps they ride on, shared by the prompts packed
  // into one iteration, as lowerRequests charges them at the batch found.
  // The chunk's GEMMs hide under the step's weight read (or, streamed,
  // under the stream): those two times, interpolated as the step's parts.
  const StepAt One{Gemm1, Weights1, Attention1, KV1, Added1, Overlap};
  const StepAt Full{GemmSlots, WeightsSlots, AttentionSlots,
                    KVSlots,   AddedSlots,   Overlap};
  const Chord Part(Slots, PP, WeightCurve);
  // Under pipeline parallelism the micro-batches behind a chunk follow it
  // through every stage (a convoy), and other engines' chunks ride in the
  // same slow cycles: chunk_convoy_stall over the prompt's passage (one
  // stage: each prompt's extra time).
  const Number Engines =
      in<Number>(std::max(1.0, std::min(PP.value(), Slots.value())));
  return solveRunningBatch(
      One, Full, Slots, PP, Rate, Output, WeightCurve, /*Scan=*/64,
      [&](const StepAt &At, double U) {
        Time Step = At.step();
        Time Gemm = Part.at(HiddenGemm1, HiddenGemmSlots, U),
             Hiding = Part.weights(HidingWeights1, HidingWeightsSlots, U);
        Time Own = chunkedPrefillTime(Prefill, Step, Prompt, Chunk, Gemm,
                                      Hiding, U * OneToken, Carried, Overlap);
        Time Extra = chunkExtraTime(Prefill, Step, Prompt, Chunk, Gemm, Hiding,
                                    U * OneToken, Packed, Carried, Overlap);
        return std::pair<double, double>{
            Own.value(),
            prefillInterference(
                OtherRate, chunkConvoyStall(
                               OtherRate, Extra,
                               chunkPassage(Own, Step, Prompt, Chunk), Engines))
                .value()};
      });
}

namespace {
/// A replica of static batchers (request-level batching, Orca section 2):
/// m = min(pp, B) engines of B / m slots, each taking 1 / m of the
/// replica's arrivals, their prefill of b prompts and decode step of b
/// sequences on the chords between one sequence and the slots.
class StaticReplica {
public:
  StaticReplica(Time PrefillGemm1, Time PrefillWeights1, Time PrefillAttention1,
                Time PrefillKV1, Time PrefillAdded1, Time PrefillGemmSlots,
                Time PrefillWeightsSlots, Time PrefillAttentionSlots,
                Time PrefillKVSlots, Time PrefillAddedSlots, Time Gemm1,
                Time Weights1, Time Attention1, Time KV1, Time Added1,
                Time GemmSlots, Time WeightsSlots, Time AttentionSlots,
                Time KVSlots, Time AddedSlots, Number Slots, Number PP,
                Tokens Output, Number OutputCV, Tokens OutputCap,
                Number Overlap, Number WeightCurve)
      : Slots(Slots.value()),
        Engines(
            std::max(1.0, std::min(std::max(PP.value(), 1.0), Slots.value()))),
        EngineSlots(Slots.value() / Engines), Output(Output),
        OutputCV(OutputCV), OutputCap(OutputCap), Prefill(Slots, in<Number>(1)),
        Decode(Slots, PP, WeightCurve),
        PrefillOne{PrefillGemm1, PrefillWeights1, PrefillAttention1,
                   PrefillKV1,   PrefillAdded1,   Overlap},
        PrefillFull{PrefillGemmSlots,      PrefillWeightsSlots,
                    PrefillAttentionSlots, PrefillKVSlots,
                    PrefillAddedSlots,     Overlap},
        DecodeOne{Gemm1, Weights1, Attention1, KV1, Added1, Overlap},
        DecodeFull{GemmSlots, WeightsSlots, AttentionSlots,
                   KVSlots,   AddedSlots,   Overlap} {
    for (Time V : {PrefillGemm1,
                   PrefillWeights1,
                   PrefillAttention1,
                   PrefillKV1,
                   PrefillAdded1,
                   PrefillGemmSlots,
                   PrefillWeightsSlots,
                   PrefillAttentionSlots,
                   PrefillKVSlots,
                   PrefillAddedSlots,
                   Gemm1,
                   Weights1,
                   Attention1,
                   KV1,
                   Added1,
                   GemmSlots,
                   WeightsSlots,
                   AttentionSlots,
                   KVSlots,
                   AddedSlots})
      if (std::isnan(V.value()))
        Valid = false;
    if (std::isnan(this->Slots) || std::isnan(PP.value()) ||
        std::isnan(Overlap.value()) || std::isnan(WeightCurve.value()) ||
        std::isnan(OutputCV.value()))
      Valid = false;
  }

  bool valid() const { return Valid; }
  /// The replica's slots B and engines m.
  double slots() const { return Slots; }
  double engines() const { return Engines; }
  /// An engine's slots, B / m.
  double engineSlots() const { return EngineSlots; }

  /// An engine's prefill of b prompts and its decode step at b sequences
  /// (the replica's step at m b, b its micro-batch).
  Time prefillAt(double Batch) const {
    return Prefill.step(PrefillOne, PrefillFull, Batch).step();
  }
  Time stepAt(double Batch) const {
    return Decode.step(DecodeOne, DecodeFull, Batch).step();
  }

  /// An engine's batch when the replica takes \p Lambda requests a second:
  /// b_e = min(B / m, x + e^-x), x = lambda_r / m * T(b_e), a fixed point;
  /// the slots' when there is one slot an engine or the load is infinite.
  double engineBatch(double Lambda) const {
    if (!Valid || std::isnan(Lambda))
      return std::nan("");
    if (!(Slots > 1) || !(EngineSlots > 1) || std::isinf(Lambda))
      return EngineSlots;
    const double LambdaE = Lambda / Engines;
    auto g = [&](double Batch) {
      Tokens N =
          longestOutputOfBatch(in<Number>(Batch), Output, OutputCV, OutputCap);
      double Gaps = std::max((N / OneToken).value() - 1.0, 0.0);
      double X =
          LambdaE * (prefillAt(Batch).value() + Gaps * stepAt(Batch).value());
      if (std::isnan(X))
        return std::nan("");
      if (std::isinf(X))
        return EngineSlots;
      return std::min(EngineSlots, X + std::exp(-X));
    };
    // g(1) = x + e^-x >= 1: the bracket's low end is on or above the
    // diagonal.
    double AtB = g(EngineSlots);
    if (std::isnan(AtB))
      return std::nan("");
    if (AtB >= EngineSlots)
      return EngineSlots;
    double AtOne = g(1.0);
    if (std::isnan(AtOne))
      return std::nan("");
    return rootBelowDiagonal(g, 1.0, AtOne, EngineSlots, AtB).value();
  }

  /// A request's P-quantile latency from its arrival at a replica taking
  /// \p Lambda requests a second: the wait for its engine's batch in
  /// flight, then its own batch to the longest output, each at the
  /// percentile (as the lowering adds static.wait and static.batch_time).
  Time latencyQuantile(double Lambda, Number Percentile) const {
    double Be = engineBatch(Lambda);
    if (std::isnan(Be))
      return in<Time>(std::nan(""));
    Time P = prefillAt(Be), S = stepAt(Be);
    RequestRate Rate = in<Requests>(Lambda / Engines) / in<Time>(1.0);
    return staticBatchWaitQuantile(Rate, P, S, in<Number>(Be),
                                   in<Number>(EngineSlots), Output, OutputCV,
                                   OutputCap, Percentile) +
           staticBatchTimeQuantile(P, S, in<Number>(Be), Output, OutputCV,
                                   OutputCap, Percentile);
  }

private:
  bool Valid = true;
  double Slots, Engines, EngineSlots;
  Tokens Output;
  Number OutputCV;
  Tokens OutputCap;
  Chord Prefill, Decode;
  StepAt PrefillOne, PrefillFull, DecodeOne, DecodeFull;
};
} // namespace

Number staticBatchAtLoad(Time PrefillGemm1, Time PrefillWeights1,
                         Time PrefillAttention1, Time PrefillKV1,
                         Time PrefillAdded1, Time PrefillGemmSlots,
                         Time PrefillWeightsSlots, Time PrefillAttentionSlots,
                         Time PrefillKVSlots, Time PrefillAddedSlots,
                         Time Gemm1, Time Weights1, Time Attention1, Time KV1,
                         Time Added1, Time GemmSlots, Time WeightsSlots,
                         Time AttentionSlots, Time KVSlots, Time AddedSlots,
                         Number Slots, Number PP, RequestRate Rate,
                         Tokens Output, Number OutputCV, Tokens OutputCap,
                         Number Overlap, Number WeightCurve) {
  const StaticReplica R(
      PrefillGemm1, PrefillWeights1, PrefillAttention1, PrefillKV1,
      PrefillAdded1, PrefillGemmSlots, PrefillWeightsSlots,
      PrefillAttentionSlots, PrefillKVSlots, PrefillAddedSlots, Gemm1, Weights1,
      Attention1, KV1, Added1, GemmSlots, WeightsSlots, AttentionSlots, KVSlots,
      AddedSlots, Slots, PP, Output, OutputCV, OutputCap, Overlap, WeightCurve);
  const double Lambda = (Rate / in<Requests>(1.0)).value();
  if (!R.valid() || std::isnan(Lambda))
    return in<Number>(std::nan(""));
  // The slots' when the engines' batches fill them (engineBatch's answer
  // with one slot an engine or an infinite load); else m times an
  // engine's batch.
  double Be = R.engineBatch(Lambda);
  return Be >= R.engineSlots() ? Slots : in<Number>(R.engines() * Be);
}

Number staticReplicasForP99Latency(
    Time PrefillGemm1, Time PrefillWeights1, Time PrefillAttention1,
    Time PrefillKV1, Time PrefillAdded1, Time PrefillGemmSlots,
    Time PrefillWeightsSlots, Time PrefillAttentionSlots, Time PrefillKVSlots,
    Time PrefillAddedSlots, Time Gemm1, Time Weights1, Time Attention1,
    Time KV1, Time Added1, Time GemmSlots, Time WeightsSlots,
    Time AttentionSlots, Time KVSlots, Time AddedSlots, Number Slots, Number PP,
    RequestRate ArrivalRate, Tokens Output, Number OutputCV, Tokens OutputCap,
    Number Overlap, Number WeightCurve, Time Target) {
  const StaticReplica R(
      PrefillGemm1, PrefillWeights1, PrefillAttention1, PrefillKV1,
      PrefillAdded1, PrefillGemmSlots, PrefillWeightsSlots,
      PrefillAttentionSlots, PrefillKVSlots, PrefillAddedSlots, Gemm1, Weights1,
      Attention1, KV1, Added1, GemmSlots, WeightsSlots, AttentionSlots, KVSlots,
      AddedSlots, Slots, PP, Output, OutputCV, OutputCap, Overlap, WeightCurve);
  const double Lambda = (ArrivalRate / in<Requests>(1.0)).value();
  const double Want = Target.value();
  if (!R.valid() || std::isnan(Lambda) || std::isnan(Want) || Lambda < 0)
    return in<Number>(std::nan(""));
  const double Inf = std::numeric_limits<double>::infinity();
  if (std::isinf(Lambda))
    return in<Number>(Inf);
  const Number P99 = in<Number>(0.99);
  // Meets the target with n replicas, the arrivals split evenly.
  auto meets = [&](double N) {
    double Latency = R.latencyQuantile(Lambda / N, P99).value();
    return !std::isnan(Latency) && Latency <= Want;
  };
  // An idle replica's own batch is the least any count reaches.
  if (!(R.latencyQuantile(0, P99).value() <= Want))
    return in<Number>(Inf);
  // More replicas take fewer requests each: smaller batches, shorter
  // batches and fewer arrivals finding one in flight, so the P99 falls
  // with n; it is searched by doubling, then halving the bracket, up to
  // 2^53 replicas (every count below it exact in a double).
  constexpr double MaxReplicas = 9007199254740992.0;
  double Hi = 1;
  while (!meets(Hi)) {
    if (Hi >= MaxReplicas)
      return in<Number>(Inf);
    Hi = std::min(2 * Hi, MaxReplicas);
  }
  double Lo = std::floor(Hi / 2); // fails, or 0 when Hi = 1
  while (Hi - Lo > 1) {
    double Mid = std::floor(0.5 * (Lo + Hi));
    (meets(Mid) ? Hi : Lo) = Mid;
  }
  return in<Number>(Hi);
}

} // namespace mlsc::walls
