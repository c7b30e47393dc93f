//===- BatchingTest.cpp - Known answers for wall 5 (batching) -------------===//
//
// Each expected value is a published figure or a hand calculation written
// out in the test.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mlsc;
using namespace mlsc::q;
using namespace mlsc::walls;

namespace {

const Number One = in<Number>(1);

TEST(BatchingWall, PagedBlocksAndLastBlockWasteByHand) {
  // 1,000 tokens in blocks of 16: 1000 / 16 = 62.5, so 63 blocks holding
  // 1,008 slots, 8 of them empty. At 100 B/token over TP 2: 50,400 B held,
  // 400 B wasted per device.
  Tokens B = in<Tokens>(16);
  BytesPerToken KV = in<BytesPerToken>(100);
  Number TP = in<Number>(2);
  EXPECT_EQ(kvBlocksPerSequence(in<Tokens>(1000), B).value(), 63.0);
  EXPECT_DOUBLE_EQ(pagedKVBytesPerSequence(in<Tokens>(1000), B, KV, TP).value(),
                   50400.0);
  EXPECT_DOUBLE_EQ(
      kvBytesWastedPerSequence(in<Tokens>(1000), B, KV, TP).value(), 400.0);
  // 1,024 tokens fill 64 blocks exactly: nothing wasted.
  EXPECT_EQ(kvBlocksPerSequence(in<Tokens>(1024), B).value(), 64.0);
  EXPECT_EQ(kvBytesWastedPerSequence(in<Tokens>(1024), B, KV, TP).value(), 0.0);
  // One token still takes a whole block.
  EXPECT_EQ(kvBlocksPerSequence(in<Tokens>(1), B).value(), 1.0);
}

TEST(BatchingWall, Llama70BConcurrentSequencesOnTwoH100s) {
  // Llama-3-70B at TP 2 on 80 GB H100s: 70.6 GB of bf16 weights per device,
  // 4 GB of runtime overhead, so 5.4 GB free. Sequences of 3,072 tokens
  // (192 blocks of 16) at 320 KiB/token / TP 2 = 503,316,480 B each:
  // 5.4e9 / 503,316,480 = 10.73, so 10 sequences.
  Bytes HBM = in<Bytes>(80e9), Overhead = in<Bytes>(4e9);
  Bytes W = weightBytesPerDevice(in<Number>(70.6e9), in<Bytes>(2),
                                 in<Number>(2), One);
  Tokens Len = in<Tokens>(3072), Block = in<Tokens>(16);
  Number L = in<Number>(80), KVHeads = in<Number>(8), HeadDim = in<Number>(128);
  Bytes Bf16Seq = pagedKVBytesPerSequence(
      Len, Block, kvBytesPerToken(L, KVHeads, HeadDim, in<Bytes>(2)),
      in<Number>(2));
  EXPECT_DOUBLE_EQ(Bf16Seq.value(), 503316480.0);
  EXPECT_EQ(maxConcurrentSequences(HBM, W, Overhead, Bf16Seq).value(), 10.0);
  // An fp8 KV cache with the same bf16 weights: 5.4e9 / 251,658,240 = 21.46,
  // so 21 sequences.
  Bytes Fp8Seq = pagedKVBytesPerSequence(
      Len, Block, kvBytesPerToken(L, KVHeads, HeadDim, in<Bytes>(1)),
      in<Number>(2));
  EXPECT_EQ(maxConcurrentSequences(HBM, W, Overhead, Fp8Seq).value(), 21.0);
  // On one device the weights alone (141.2 GB) do not fit: no sequences.
  EXPECT_EQ(maxConcurrentSequences(HBM, in<Bytes>(141.2e9), Overhead, Bf16Seq)
                .value(),
            0.0);
}

TEST(BatchingWall, ExactQuotientsAreNotRoundedDown) {
  // 0.3 / 0.1 is 2.9999999999999996 in doubles; three sequences still fit.
  EXPECT_EQ(maxConcurrentSequences(in<Bytes>(0.3), in<Bytes>(0), in<Bytes>(0),
                                   in<Bytes>(0.1))
                .value(),
            3.0);
}

TEST(BatchingWall, StaticBatchingWaitsForTheLongestSequence) {
  // 16 sequences, mean output 200, longest 800, 25 ms per step. Static:
  // 16 x 200 tokens in 800 x 25 ms = 160 tok/s. Continuous: 16 tokens per
  // 25 ms step = 640 tok/s, a gain of 800 / 200 = 4.
  Number B = in<Number>(16);
  Time Step = in<Time>(0.025);
  EXPECT_DOUBLE_EQ(
      staticBatchThroughput(B, in<Tokens>(200), in<Tokens>(800), Step).value(),
      160.0);
  EXPECT_DOUBLE_EQ(decodeThroughput(B, Step).value(), 640.0);
  EXPECT_DOUBLE_EQ(
      continuousBatchingGain(in<Tokens>(200), in<Tokens>(800)).value(), 4.0);
}

TEST(BatchingWall, MaxBatchUnderTPOTByRegime) {
  // Llama-3-70B-like decode at TP 2 on H100 (989 TFLOP/s, 3.35 TB/s, both
  // kernel classes at the full peak here): 70.6 GB of weights (21.07 ms)
  // and 2,048 x 163,840 B = 335,544,320 B of KV per sequence per device
  // (a = 0.10016 ms a sequence; its attention FLOPs, 2 x 80 x 2,048 x
  // 8,192 / 2 = 1.342 GFLOP, take 1.357 us); TPOT limit 50 ms.
  FlopRate Peak = in<FlopRate>(989e12);
  Bandwidth BW = in<Bandwidth>(3.35e12);
  Bytes W = in<Bytes>(70.6e9), M = in<Bytes>(335544320);
  Flops Fa = in<Flops>(2.0 * 80 * 2048 * 8192 / 2);
  Time Limit = in<Time>(0.05);
  Number NoCap = in<Number>(1000);
  auto step = [&](Number B, Flops Fg) {
    return batchedDecodeStepTime(B, Fg, Fa, W, M, Peak, Peak, BW,
                                 in<Number>(1));
  };
  auto best = [&](Time L, Flops Fg, Number Cap) {
    return maxBatchUnderTPOT(L, Fg, Fa, W, M, Peak, Peak, BW, Cap,
                             in<Number>(1));
  };

  // Memory-bound: 50 GFLOP of GEMMs a sequence (50.56 us). The weights and
  // the KV allow (50 - 21.07) / 0.10016 = 288.8; the GEMMs and the KV
  // 50 / (0.05056 + 0.10016) = 331.7: 288.
  Flops F = in<Flops>(5e10);
  Number B = best(Limit, F, NoCap);
  EXPECT_EQ(B.value(), 288.0);
  EXPECT_LE(step(B, F), Limit);
  EXPECT_GT(step(B + 1.0, F), Limit);
  // Throughput B / T(B) at the optimum beats half the batch.
  Number Half = in<Number>(144);
  EXPECT_GT(decodeThroughput(B, step(B, F)),
            decodeThroughput(Half, step(Half, F)));

  // GEMMs compute-bound: 150 GFLOP a sequence (151.67 us): 50 / (0.15167 +
  // 0.10016) = 198.5, so 198, where the GEMMs take 30.03 ms (above the
  // weights' 21.07) and the KV 19.83 ms, in sequence 49.86 ms. One roofline
  // over the step, max(B x 0.15303, 21.07 + B x 0.10016) ms, would allow
  // 288: the kernel classes do not overlap.
  Flops F2 = in<Flops>(1.5e11);
  Number B2 = best(Limit, F2, NoCap);
  EXPECT_EQ(B2.value(), 198.0);
  EXPECT_NEAR(step(B2, F2).value() * 1e3,
              198 * (1.5e11 / 989e12 + 335544320 / 3.35e12) * 1e3, 1e-9);
  EXPECT_NEAR(step(B2, F2).value() * 1e3, 49.86, 0.005);
  EXPECT_GT(step(B2 + 1.0, F2), Limit);

  // No overlap (kernels.overlap 0): the GEMMs' 50.56 us a sequence add to
  // the weights' 21.07 ms, (50 - 21.075) / (0.05056 + 0.10016) = 191.9, so
  // 191, where one overlap would allow 288.
  auto apart = [&](Number B, Flops Fg) {
    return batchedDecodeStepTime(B, Fg, Fa, W, M, Peak, Peak, BW,
                                 in<Number>(0));
  };
  Number B0 = maxBatchUnderTPOT(Limit, F, Fa, W, M, Peak, Peak, BW, NoCap,
                                in<Number>(0));
  EXPECT_EQ(B0.value(), 191.0);
  EXPECT_NEAR(apart(B0, F).value(),
              70.6e9 / 3.35e12 + 191 * (5e10 / 989e12 + 335544320 / 3.35e12),
              1e-12);
  EXPECT_LE(apart(B0, F), Limit);
  EXPECT_GT(apart(B0 + 1.0, F), Limit);
  // Half overlap: the closed form agrees with the step it inverts.
  Number BHalf = maxBatchUnderTPOT(Limit, F, Fa, W, M, Peak, Peak, BW, NoCap,
                                   in<Number>(0.5));
  auto half = [&](Number B) {
    return batchedDecodeStepTime(B, F, Fa, W, M, Peak, Peak, BW,
                                 in<Number>(0.5));
  };
  EXPECT_GT(BHalf.value(), 191.0);
  EXPECT_LT(BHalf.value(), 288.0);
  EXPECT_LE(half(BHalf), Limit);
  EXPECT_GT(half(BHalf + 1.0), Limit);

  // Capacity-bound: only 10 sequences fit in memory.
  EXPECT_EQ(best(Limit, F, in<Number>(10)).value(), 10.0);
  // Infeasible: reading the weights alone takes 70.6e9 / 3.35e12 = 21.1 ms,
  // more than a 20 ms limit.
  EXPECT_EQ(best(in<Time>(0.02), F, NoCap).value(), 0.0);
}

TEST(BatchingWall, RunningDecodeBatchIsLittlesLawFixedPoint) {
  // A memory-bound step: 10 ms of weights, and KV traffic from 0 at one
  // sequence to 10 ms at the 101 slots, so 0.1 ms per sequence more; the
  // GEMMs' compute, 0 to 1 ms, stays below the weights; no attention
  // compute, nothing added. A request holds its slot for a 100 ms prefill
  // and 100 gaps: S(b) = 0.1 + 100 x (0.010 + 0.0001 x (b - 1)) = 1.09 +
  // 0.01 b s.
  auto ms = [](double V) { return in<Time>(V * 1e-3); };
  const Time Zero = ms(0);
  auto solve = [&](double Rate, double PP, double Interference,
                   double SlotsMemory = 20) {
    return runningDecodeBatch(Zero, ms(10), Zero, Zero, Zero, ms(1), ms(10),
                              Zero, ms(SlotsMemory - 10), Zero, in<Number>(101),
                              in<Number>(PP), in<RequestRate>(Rate), ms(100),
                              in<Tokens>(101), in<Number>(Interference),
                              in<Number>(1), in<Number>(0))
        .value();
  };
  // 10 req/s: b = 1 + 10 x (1.09 + 0.01 b) = 11.9 + 0.1 b, b = 11.9 / 0.9.
  EXPECT_NEAR(solve(10, 1, 0), 11.9 / 0.9, 1e-9);
  // Half the time to other prefills: S = 0.1 + 100 x 2 x (0.0099 + 0.0001
  // b) = 2.08 + 0.02 b; b = 1 + 20.8 + 0.2 b = 21.8 / 0.8 = 27.25.
  EXPECT_NEAR(solve(10, 1, 0.5), 27.25, 1e-9);
  // 100 req/s: b = 110 + b has no root below the slots: they stay full.
  EXPECT_EQ(solve(100, 1, 0), 101.0);
  // Prefills alone fill the replica: the slots never empty.
  EXPECT_EQ(solve(10, 1, 1), 101.0);
  // Two pipeline stages: a micro-batch is u = b / 2, and at the slots
  // 50.5, so with 14.95 ms there the step still grows 0.1 ms per sequence
  // of u: S = 0.1 + 100 x (0.0099 + 0.0001 b / 2) = 1.09 + 0.005 b and
  // b = 1 + 10.9 + 0.05 b = 11.9 / 0.95.
  EXPECT_NEAR(solve(10, 2, 0, 14.95), 11.9 / 0.95, 1e-9);
  // The GEMMs grow to 21 ms at the slots (0.2 ms a sequence) and bind
  // from b - 1 = 45 on, while attention still reads its KV: the classes
  // add, T(b) = 1 + 0.3 (b - 1) ms there. At 30 req/s, S = 0.2 + 0.03
  // (b - 1) s and b - 1 = 30 x S = 6 + 0.9 (b - 1): b = 61 (T = 13 + 6 =
  // 19 ms, S = 2.0 s). One roofline over the step, max(1 + 0.2 (b - 1),
  // 10 + 0.1 (b - 1)), would stay memory-bound up to b - 1 = 90 and find
  // b - 1 = 33 + 0.3 (b - 1), b = 48.14.
  EXPECT_NEAR(runningDecodeBatch(
                  ms(1), ms(10), Zero, Zero, Zero, ms(21), ms(10), Zero, ms(10),
                  Zero, in<Number>(101), One, in<RequestRate>(30), ms(100),
                  in<Tokens>(101), in<Number>(0), in<Number>(1), in<Number>(0))
                  .value(),
              61.0, 1e-9);
  // No traffic: the request runs alone.
  EXPECT_NEAR(solve(0, 1, 0), 1.0, 1e-12);
  // One slot is one sequence whatever the load; NaN stays NaN.
  EXPECT_EQ(runningDecodeBatch(Zero, ms(10), Zero, Zero, Zero, ms(1), ms(10),
                               Zero, ms(10), Zero, One, One,
                               in<RequestRate>(10), ms(100), in<Tokens>(101),
                               in<Number>(0), in<Number>(1), in<Number>(0))
                .value(),
            1.0);
  EXPECT_TRUE(std::isnan(solve(std::nan(""), 1, 0)));
}

TEST(BatchingWall, RunningBatchTakesAnMoEStepsWeightsOnTheirCurve) {
  // An MoE step reads the experts its tokens touch: 8 experts, top-2, so
  // a token misses a given expert with q = 6/8. The weight read is 4 ms
  // at one sequence and 10 ms at the 64 slots, W(u) = 4 + 6 (0.75 -
  // 0.75^u) / (0.75 - 0.75^64) ms (nearly all experts from u = 10 on);
  // nothing else. At 2 req/s, 100 gaps and no fixed time, b = 1 + 2 x 0.1
  // x W(b) ms: at b = 2, W = 4 + 6 x 0.1875 / 0.75 = 5.5 ms and g = 2.1;
  // the root is where 1 + 0.2 W(b) = b, W = 5 (b - 1) ms: b = 2.1340 by
  // bisection (W = 5.670 ms). On the chord (W(b) = 4 + 6 (b - 1) / 63)
  // the root is b = 1.8155 (W = 4.078 ms), 15% fewer.
  auto ms = [](double V) { return in<Time>(V * 1e-3); };
  const Time Zero = ms(0);
  auto solve = [&](double Curve) {
    return runningDecodeBatch(Zero, ms(4), Zero, Zero, Zero, Zero, ms(10), Zero,
                              Zero, Zero, in<Number>(64), in<Number>(1),
                              in<RequestRate>(2), Zero, in<Tokens>(101),
                              in<Number>(0), in<Number>(1), in<Number>(Curve))
        .value();
  };
  const double B = solve(0.75);
  const double W =
      4 + 6 * (0.75 - std::pow(0.75, B)) / (0.75 - std::pow(0.75, 64));
  EXPECT_NEAR(B, 1 + 0.2 * W, 1e-9); // Little's law on the curve
  EXPECT_NEAR(B, 2.1340, 1e-4);
  EXPECT_NEAR(solve(0), 1.8155, 1e-4); // the chord, for a dense step
}

TEST(BatchingWall, RunningBatchTakesChunksAtTheBatch) {
  // A memory-bound step, T(b) = 10 + 0.1 (b - 1) ms: 10 ms of weights and
  // KV traffic 0.1 ms a sequence beyond the first; the GEMMs, 0.01 ms a
  // sequence, hide under the weights. 101 slots, 101 output tokens (100
  // gaps), 10 req/s of arrivals, the other requests' prompts at 100/s.
  // A prompt of 1,000 tokens is one chunk, 5 ms alone; its GEMMs take
  // 0.01 b x 1,000 / b = 10 ms against a slack of 10 - 0.01 b: it adds
  // 0.01 b ms to its iteration, which takes T(b) + 0.01 b. So the prompt
  // holds its slot T(b) + 0.01 b, and the others' prompts take f = 100 /s
  // x 0.01 b ms = 0.001 b of the time. b = 1 + 10 /s x (T(b) + 0.01 b +
  // 100 T(b) / (1 - 0.001 b)) has its root at b = 12.3915: T = 11.139 ms,
  // the prompt 11.263 ms, f = 0.01239, 1 + 0.01 x (11.263 + 1,127.9).
  auto ms = [](double V) { return in<Time>(V * 1e-3); };
  const Time Zero = ms(0);
  auto solve = [&](double Prefill, double Packed) {
    return runningDecodeBatchChunked(
               ms(0.01), ms(10), Zero, Zero, Zero, ms(1.01), ms(10), Zero,
               ms(10), Zero, in<Number>(101), in<Number>(1),
               in<RequestRate>(10), in<Tokens>(101), ms(Prefill),
               in<Tokens>(1000), in<Tokens>(1000), in<RequestRate>(100),
               in<Number>(Packed), ms(0.01), ms(10), ms(1.01), ms(10), Zero,
               in<Number>(1), in<Number>(0))
        .value();
  };
  const double B = solve(5, 1);
  EXPECT_NEAR(B, 12.3915488544783, 1e-9);
  // Little's law holds at the answer.
  const double T = 10 + 0.1 * (B - 1), F = 0.001 * B;
  EXPECT_NEAR(B, 1 + 0.01 * (T + 0.01 * B + 100 * T / (1 - F)), 1e-9);
  // Taking the chunk on a one-sequence step (0.01 ms added, f = 0.001)
  // finds fewer: b = 1 + 0.01 x (10.01 + 100 T(b) / 0.999) = 12.2347.
  EXPECT_LT(runningDecodeBatch(ms(0.01), ms(10), Zero, Zero, Zero, ms(1.01),
                               ms(10), Zero, ms(10), Zero, in<Number>(101),
                               in<Number>(1), in<RequestRate>(10), ms(10.01),
                               in<Tokens>(101), in<Number>(0.001),
                               in<Number>(1), in<Number>(0))
                .value(),
            B - 0.15);
  // A prefill that alone takes 15 ms binds its iteration while T(b) +
  // 0.01 b < 15 ms: the prompt holds 15 ms and adds 15 - T(b), f = 100 /s x
  // (15 - T(b)) ms, which falls as the step grows; Little's law still
  // holds at the answer.
  const double B15 = solve(15, 1), T15 = 10 + 0.1 * (B15 - 1);
  EXPECT_LT(T15 + 0.01 * B15, 15.0);
  EXPECT_NEAR(B15, 1 + 0.01 * (15 + 100 * T15 / (1 - 0.1 * (15 - T15))), 1e-9);
  // The other prompts' chunks alone fill the replica: a 50 ms prefill
  // adds 50 - T(b) ms, f = 100 /s x about 40 ms = 4 >= 1, so the slots fill
  // (the prompt's own 50 ms would keep only 1 + 10 x 0.05 = 1.5 of them).
  EXPECT_EQ(solve(50, 1), 101.0);
  // NaN stays NaN.
  EXPECT_TRUE(std::isnan(solve(std::nan(""), 1)));
}

TEST(BatchingWall, ChunkedRunningBatchTakesTheSmallestRoot) {
  // 10 ms of weights a step; the GEMMs take 0.1 ms a sequence, so the step
  // is T(b) = max(10, 0.1 b) ms up to the 301 slots. A 50-token prompt is
  // one chunk, 1 ms alone; its GEMMs take 0.1 b x 50 / b = 5 ms against a
  // slack of 10 - 0.1 b: hidden up to b = 50, then adding 0.1 (b - 50) ms
  // up to 5 ms at b = 100. The others' prompts come at 190/s, so f = 0.019
  // (b - 50) there, 0.95 at b = 100. At 45 req/s and 100 gaps, below
  // b = 50 nothing is added: b = 1 + 45 x (10 ms + 100 x 10 ms) = 46.45,
  // where g stays above the diagonal from 1. Past b = 50 f grows fast
  // enough that g climbs back over it (at b = 100, 1 + 45 x (15 ms + 1 s /
  // 0.05) = 901), so g(B) >= B, and the slots-full answer would be the
  // largest root, not the one a replica filling from empty settles at.
  auto ms = [](double V) { return in<Time>(V * 1e-3); };
  const Time Zero = ms(0);
  EXPECT_NEAR(runningDecodeBatchChunked(
                  ms(0.1), ms(10), Zero, Zero, Zero, ms(30.1), ms(10), Zero,
                  Zero, Zero, in<Number>(301), in<Number>(1),
                  in<RequestRate>(45), in<Tokens>(101), ms(1), in<Tokens>(50),
                  in<Tokens>(50), in<RequestRate>(190), in<Number>(1), ms(0.1),
                  ms(10), ms(30.1), ms(10), Zero, in<Number>(1), in<Number>(0))
                  .value(),
              46.45, 1e-9);
}

TEST(BatchingWall, FormulasCarryWallAndDimensions) {
  EXPECT_EQ(formula(FormulaId::MaxConcurrentSequences).W, Wall::Batching);
  EXPECT_EQ(formula(FormulaId::MaxBatchUnderTPOT).W, Wall::Batching);
  EXPECT_TRUE(
      formula(FormulaId::MaxConcurrentSequences).Result.isDimensionless());
  EXPECT_EQ(formula(FormulaId::PagedKVBytesPerSequence).Result.str(), "B");
  EXPECT_EQ(formula(FormulaId::PagedKVBytesPerSequence).Params[0].str(), "tok");
  EXPECT_EQ(formula(FormulaId::StaticBatchThroughput).Result.str(), "tok/s");
  ASSERT_EQ(formula(FormulaId::MaxBatchUnderTPOT).Params.size(), 10u);
  EXPECT_EQ(formula(FormulaId::MaxBatchUnderTPOT).Params[5].str(), "FLOP/s");
}

TEST(BatchingWall, StaticBatchAtLoadTakesWhatArrivedDuringTheLastBatch) {
  // A prefill of any batch up to the 8 slots reads 2 ms of weights; so
  // does a decode step, whose KV traffic grows from 0 at one sequence to
  // 7 ms at the slots (1 ms a sequence more); overlap 1, nothing added.
  // With one output length of 11, T(b) = 2 + 10 x (2 + (b - 1)) ms.
  auto ms = [](double V) { return in<Time>(V * 1e-3); };
  const Time Zero = ms(0);
  auto solve = [&](double Rate, double KVSlots, double CV = 0, double Cap = 0) {
    return staticBatchAtLoad(
               Zero, ms(2), Zero, Zero, Zero, Zero, ms(2), Zero, Zero, Zero,
               Zero, ms(2), Zero, Zero, Zero, Zero, ms(2), Zero, ms(KVSlots),
               Zero, in<Number>(8), One, in<RequestRate>(Rate), in<Tokens>(11),
               in<Number>(CV), in<Tokens>(Cap), One, in<Number>(0))
        .value();
  };
  // Flat steps, T = 22 ms: at 100 req/s x = 2.2 and b = x + e^-x =
  // 2.2 + 0.11080 = 2.31080 (eval/static-at-load.mls by hand).
  EXPECT_NEAR(solve(100, 0), 2.2 + std::exp(-2.2), 1e-9);
  // The step growing: at 50 req/s x = 50 x (0.022 + 0.010 (b - 1)) and b =
  // x + e^-x has its root at b = 1.67503 (x = 1.43752, e^-x = 0.23752).
  double B = solve(50, 7);
  double X = 50 * (0.022 + 0.010 * (B - 1));
  EXPECT_NEAR(B, X + std::exp(-X), 1e-9);
  EXPECT_NEAR(B, 1.67503, 1e-5);
  // Light load: rarely more than one waits; at 1 req/s x = 0.022 + 0.010
  // (b - 1) = 0.0220024 and b = x + e^-x = 1.00024.
  EXPECT_NEAR(solve(1, 7), 1.00024, 1e-5);
  // Past the full batches' 8 / 92 ms = 87 req/s the slots stay full.
  EXPECT_EQ(solve(100, 7), 8.0);
  // A cap without a spread is every batch's longest output: T = 2 + 20 x
  // 2 = 42 ms, x = 2.1 at 50 req/s, b = 2.1 + e^-2.1.
  EXPECT_NEAR(solve(50, 0, 0, 21), 2.1 + std::exp(-2.1), 1e-9);
  // On 4 pipeline stages a replica runs 4 engines (min(pp, B)), each a
  // static batcher of 8 / 4 = 2 slots taking a quarter of the arrivals,
  // its batch one micro-batch through the stages. A prefill whose GEMMs
  // take 10 ms a prompt (10 ms at one, 80 at the replica's 8 slots) over
  // its 2 ms of weights, P(b) = 10 b ms, and flat 2 ms decode steps:
  // T(b) = 10 b + 20 ms. At 100 req/s an engine takes 25: x = 0.25 b +
  // 0.5 and b = x + e^-x at b = 1.25726 (x = 0.81431, e^-x = 0.44294);
  // the replica's batch is 4 x 1.25726 = 5.0290. As one batcher of 8 (x
  // = 100 x (0.010 b + 0.020) = b + 2 > b) it stayed at its 8 slots.
  double Pp =
      staticBatchAtLoad(ms(10), ms(2), Zero, Zero, Zero, ms(80), ms(2), Zero,
                        Zero, Zero, Zero, ms(2), Zero, Zero, Zero, Zero, ms(2),
                        Zero, Zero, Zero, in<Number>(8), in<Number>(4),
                        in<RequestRate>(100), in<Tokens>(11), in<Number>(0),
                        in<Tokens>(0), One, in<Number>(0))
          .value();
  double Be = Pp / 4, Xp = 25 * (0.010 * Be + 0.020);
  EXPECT_NEAR(Be, Xp + std::exp(-Xp), 1e-9);
  EXPECT_NEAR(Pp, 5.0290, 1e-4);
  // The decode step growing with the engine's batch, its micro-batch: 2
  // ms at one sequence, 9 ms at an engine's 2 slots (the replica's 8 over
  // 4 micro-batches), S(b) = 2 + 7 (b - 1) ms, so T(b) = 10 b + 10 S(b) =
  // 80 b - 50 ms. At 20 req/s an engine takes 5: x = 0.4 b - 0.25, b = x +
  // e^-x at b = 1.0113 (4.045 the replica). At 100 req/s (x = 2 b - 1.25)
  // an engine's 2 slots cannot keep up: the replica's 8.
  auto piped = [&](double Rate) {
    return staticBatchAtLoad(
               ms(10), ms(2), Zero, Zero, Zero, ms(80), ms(2), Zero, Zero, Zero,
               Zero, ms(2), Zero, Zero, Zero, Zero, ms(2), Zero, ms(7), Zero,
               in<Number>(8), in<Number>(4), in<RequestRate>(Rate),
               in<Tokens>(11), in<Number>(0), in<Tokens>(0), One, in<Number>(0))
        .value();
  };
  double Grow = piped(20) / 4, Xg = 5 * (0.080 * Grow - 0.050);
  EXPECT_NEAR(Grow, Xg + std::exp(-Xg), 1e-9);
  EXPECT_NEAR(Grow, 1.0113, 1e-4);
  EXPECT_EQ(piped(100), 8.0);
  // Saturated engines whose count does not divide the slots (7 of 29 to a
  // replica) give back the slots exactly, not m x (B / m).
  EXPECT_EQ(staticBatchAtLoad(ms(10), ms(2), Zero, Zero, Zero, ms(290), ms(2),
                              Zero, Zero, Zero, Zero, ms(2), Zero, Zero, Zero,
                              Zero, ms(2), Zero, Zero, Zero, in<Number>(29),
                              in<Number>(7), in<RequestRate>(1e4),
                              in<Tokens>(11), in<Number>(0), in<Tokens>(0), One,
                              in<Number>(0))
                .value(),
            29.0);
}

TEST(BatchingWall, StaticReplicasForP99LatencySolvesEachCountsOwnBatch) {
  // The replicas of the test above: prefills and decode steps of 2 ms of
  // weights, the decode's KV traffic growing by KVPerSequence ms a
  // sequence, one output length of 11, 100 req/s split evenly.
  auto ms = [](double V) { return in<Time>(V * 1e-3); };
  const Time Zero = ms(0);
  auto size = [&](double KVSlots, double TargetMs, double Rate = 100) {
    return staticReplicasForP99Latency(
               Zero, ms(2), Zero, Zero, Zero, Zero, ms(2), Zero, Zero, Zero,
               Zero, ms(2), Zero, Zero, Zero, Zero, ms(2), Zero, ms(KVSlots),
               Zero, in<Number>(8), One, in<RequestRate>(Rate), in<Tokens>(11),
               in<Number>(0), in<Tokens>(0), One, in<Number>(0), ms(TargetMs))
        .value();
  };
  // Flat steps: every batch takes T = 22 ms, and the residual of the batch
  // in flight is uniform on [0, T], so the P99 wait is T (1 - 0.01 / rho)
  // (rho = x / b > 0.01) and the P99 latency T (2 - 0.01 / rho). Under 40
  // ms needs rho <= 0.055: x = 2.2 / n, rho = x / (x + e^-x). At n = 39, x
  // = 0.056410, rho = 0.056322: 40.09 ms; at n = 40, x = 0.055, rho =
  // 0.054918: 39.99 ms. So 40.
  EXPECT_EQ(size(0, 40), 40.0);
  // A target under one batch's 22 ms: no count meets it.
  EXPECT_TRUE(std::isinf(size(0, 21)));
  // The step growing with the batch, T(b) = 22 + 10 (b - 1) ms, and each
  // count's own batch: at n = 4, 25 req/s a replica, b = 1.14237 (x =
  // 0.58560), T = 23.424 ms, rho = 0.51261, P99 46.39 ms; at n = 5, 20
  // req/s, b = 1.09059 (x = 0.45812), T = 22.906 ms, rho = 0.42006, P99
  // 45.27 ms. Under 46 ms: 5. (Held at the slots' 92 ms batch, as the
  // slots' queue was, no count would meet it.)
  EXPECT_EQ(size(7, 46), 5.0);
  EXPECT_EQ(size(7, 46.5), 4.0);
  // The count is the first that meets it: the same sums at n - 1 fail.
  for (double N : {5.0, 4.0}) {
    double Rate = 100 / N;
    double B =
        staticBatchAtLoad(Zero, ms(2), Zero, Zero, Zero, Zero, ms(2), Zero,
                          Zero, Zero, Zero, ms(2), Zero, Zero, Zero, Zero,
                          ms(2), Zero, ms(7), Zero, in<Number>(8), One,
                          in<RequestRate>(Rate), in<Tokens>(11), in<Number>(0),
                          in<Tokens>(0), One, in<Number>(0))
            .value();
    Time S = ms(2 + (B - 1)), P = ms(2);
    double P99 =
        (staticBatchWaitQuantile(in<RequestRate>(Rate), P, S, in<Number>(B),
                                 in<Number>(8), in<Tokens>(11), in<Number>(0),
                                 in<Tokens>(0), in<Number>(0.99)) +
         staticBatchTimeQuantile(P, S, in<Number>(B), in<Tokens>(11),
                                 in<Number>(0), in<Tokens>(0),
                                 in<Number>(0.99)))
            .value();
    EXPECT_NEAR(P99, N == 5 ? 0.045267 : 0.046390, 1e-6);
  }
  // Past the million replicas the search once stopped at: 10^9 req/s
  // needs rho <= 0.055 at each, x = 0.0550819, n = 2.2e7 / x =
  // 399,405,072.04 (the boundary's rounding aside).
  EXPECT_NEAR(size(0, 40, 1e9), 399405073, 1);
  // No arrivals: one replica; infinite arrivals: none.
  EXPECT_EQ(size(0, 40, 0), 1.0);
  EXPECT_TRUE(std::isinf(size(0, 40, std::numeric_limits<double>::infinity())));
}

TEST(BatchingWall, LongestOutputOfABatch) {
  const Tokens Mean = in<Tokens>(272), NoCap = in<Tokens>(0);
  // One draw: its mean. One length: the length, or the cap when given.
  EXPECT_NEAR(longestOutputOfBatch(One, Mean, in<Number>(0.5), NoCap).value(),
              272.0, 0.01 * 272);
  EXPECT_EQ(
      longestOutputOfBatch(in<Number>(4), Mean, in<Number>(0), NoCap).value(),
      272.0);
  EXPECT_EQ(
      longestOutputOfBatch(in<Number>(4), Mean, in<Number>(0), in<Tokens>(500))
          .value(),
      500.0);
  // The larger of two lognormal draws: E = 2 E[X] Phi(sigma / sqrt 2),
  // sigma^2 = ln(1 + 0.5^2): sigma = 0.47238, Phi(0.33402) = 0.63082, so
  // 272 x 1.26164 = 343.17 (the trapezoid rule within 0.1%).
  EXPECT_NEAR(
      longestOutputOfBatch(in<Number>(2), Mean, in<Number>(0.5), NoCap).value(),
      343.17, 0.001 * 343.17);
  // Cut at 300, the larger of two is at most 300.
  EXPECT_LE(longestOutputOfBatch(in<Number>(2), Mean, in<Number>(0.5),
                                 in<Tokens>(300))
                .value(),
            300.0);
  // It grows with the batch.
  EXPECT_GT(longestOutputOfBatch(in<Number>(256), Mean, in<Number>(0.5), NoCap)
                .value(),
            longestOutputOfBatch(in<Number>(16), Mean, in<Number>(0.5), NoCap)
                .value());
}

} // namespace
