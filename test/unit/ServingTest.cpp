//===- ServingTest.cpp - Known answers for wall 4 (serving) ---------------===//
//
// Each expected value is a published figure or a hand calculation written
// out in the test.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace mlsc;
using namespace mlsc::q;
using namespace mlsc::walls;

namespace {

const Number One = in<Number>(1);

TEST(ServingWall, SpeculativeTokensPerStepAlpha08K4) {
  // (1 - 0.8^5) / (1 - 0.8) = (1 - 0.32768) / 0.2 = 3.3616.
  Number E = speculativeTokensPerStep(in<Number>(0.8), in<Number>(4));
  EXPECT_NEAR(E.value(), 3.3616, 1e-12);
}

TEST(ServingWall, SpeculativeTokensPerStepLimits) {
  Number K = in<Number>(4);
  // alpha = 1: every draft token is accepted, plus the target's own: k + 1.
  EXPECT_EQ(speculativeTokensPerStep(in<Number>(1.0), K).value(), 5.0);
  // Just below 1 the geometric sum 1 + a + a^2 + a^3 + a^4, summed term by
  // term, is 5 - 10e-8 to first order; the closed form must not cancel away.
  double A = 1.0 - 1e-8, Sum = 0, Power = 1;
  for (int I = 0; I <= 4; ++I, Power *= A)
    Sum += Power;
  EXPECT_NEAR(speculativeTokensPerStep(in<Number>(A), K).value(), Sum, 1e-12);
  EXPECT_NEAR(Sum, 5.0 - 10e-8, 1e-14);
  // alpha = 0: the draft is always rejected; the target still emits one.
  EXPECT_EQ(speculativeTokensPerStep(in<Number>(0.0), K).value(), 1.0);
}

TEST(ServingWall, SpeculativeTimePerToken) {
  // Draft 5 ms, target 30 ms, k = 4, alpha = 0.8:
  // (4 x 5 + 30) ms / 3.3616 = 14.874 ms per token, against 30 ms unassisted.
  Time T = speculativeTimePerToken(in<Time>(5e-3), in<Time>(30e-3),
                                   in<Number>(4), in<Number>(0.8));
  EXPECT_NEAR(T.value() * 1e3, 50.0 / 3.3616, 1e-9);
  EXPECT_NEAR(T.value() * 1e3, 14.874, 5e-4);
}

TEST(ServingWall, ChunkedPrefillByHand) {
  // 4,096 prompt tokens in chunks of 1,536: 1,536 + 1,536 + 1,024, 3 chunks.
  // An unchunked prefill of 400 ms gives chunk shares of 150, 150, 100 ms.
  Tokens S = in<Tokens>(4096), C = in<Tokens>(1536);
  Time Prefill = in<Time>(0.4);
  EXPECT_EQ(prefillChunks(S, C).value(), 3.0);
  // A memory-bound decode step of 64 tokens: 10 ms of GEMMs under 90 ms
  // of weight reads, 80 ms of slack. A 1,536-token chunk's GEMMs take
  // 10 x 1,536 / 64 = 240 ms, 160 ms beyond the slack.
  Time G = in<Time>(0.01), Wt = in<Time>(0.09);
  Tokens B = in<Tokens>(64);
  // Decode step 60 ms (no kernel classes: G = W = 0): every chunk outlasts
  // it, the prefill takes 400 ms.
  Time Zero = in<Time>(0.0);
  EXPECT_NEAR(chunkedPrefillTime(Prefill, in<Time>(0.06), S, C, Zero, Zero, B,
                                 Zero, in<Number>(1))
                  .value(),
              0.4, 1e-12);
  // Decode step 120 ms: the last chunk waits for it, 150 + 150 + 120 ms.
  EXPECT_NEAR(chunkedPrefillTime(Prefill, in<Time>(0.12), S, C, Zero, Zero, B,
                                 Zero, in<Number>(1))
                  .value(),
              0.42, 1e-12);
  EXPECT_NEAR(hybridIterationTime(Prefill, in<Time>(0.12), S, C, Zero, Zero, B,
                                  Zero, in<Number>(1))
                  .value(),
              0.15, 1e-12);
  // A chunk as long as the prompt is one iteration: max(400, 120) ms.
  EXPECT_EQ(prefillChunks(S, in<Tokens>(8192)).value(), 1.0);
  EXPECT_NEAR(chunkedPrefillTime(Prefill, in<Time>(0.12), S, in<Tokens>(8192),
                                 Zero, Zero, B, Zero, in<Number>(1))
                  .value(),
              0.4, 1e-12);
  // With the step's kernel classes: a 1,536-token chunk adds 240 - 80 =
  // 160 ms to the 120 ms step, 280 ms; the last 1,024 tokens' 160 ms of
  // GEMMs add 80 ms, 200 ms: 280 + 280 + 200 = 760 ms.
  EXPECT_NEAR(hybridIterationTime(Prefill, in<Time>(0.12), S, C, G, Wt, B, Zero,
                                  in<Number>(1))
                  .value(),
              0.28, 1e-12);
  EXPECT_NEAR(chunkedPrefillTime(Prefill, in<Time>(0.12), S, C, G, Wt, B, Zero,
                                 in<Number>(1))
                  .value(),
              0.76, 1e-12);
  // A small chunk hides under the slack: 256 tokens' 40 ms of GEMMs, the
  // step stays 120 ms (the chunk's share of the prefill is 25 ms).
  EXPECT_NEAR(hybridIterationTime(Prefill, in<Time>(0.12), S, in<Tokens>(256),
                                  G, Wt, B, Zero, in<Number>(1))
                  .value(),
              0.12, 1e-12);
  // Without overlap (kernels.overlap 0) nothing hides: the 256 tokens' 40 ms
  // of GEMMs add, 160 ms; at half overlap half of them hide under the
  // 80 ms of slack, 140 ms.
  EXPECT_NEAR(hybridIterationTime(Prefill, in<Time>(0.12), S, in<Tokens>(256),
                                  G, Wt, B, Zero, in<Number>(0))
                  .value(),
              0.16, 1e-12);
  EXPECT_NEAR(hybridIterationTime(Prefill, in<Time>(0.12), S, in<Tokens>(256),
                                  G, Wt, B, Zero, in<Number>(0.5))
                  .value(),
              0.14, 1e-12);
  // A compute-bound step (no slack: G 90 ms over W 10 ms) hides nothing:
  // the 256 tokens' 360 ms of GEMMs add to it, 480 ms.
  EXPECT_NEAR(hybridIterationTime(Prefill, in<Time>(0.12), S, in<Tokens>(256),
                                  Wt, G, B, Zero, in<Number>(1))
                  .value(),
              0.48, 1e-12);
  // What the chunks carry besides their GEMMs: say the prompt's attention
  // and all-reduces take 64 ms alone. A 256-token chunk carries 64 x 256 /
  // 4,096 = 4 ms of them, which hide under nothing: the step that hid the
  // chunk's 40 ms of GEMMs takes 124 ms.
  const Time X = in<Time>(0.064);
  EXPECT_NEAR(hybridIterationTime(Prefill, in<Time>(0.12), S, in<Tokens>(256),
                                  G, Wt, B, X, in<Number>(1))
                  .value(),
              0.124, 1e-12);
  // A prompt found whole in a prefix cache computes no tokens: no chunk,
  // the iteration is the decode step (not 0 / 0).
  EXPECT_EQ(hybridIterationTime(Prefill, in<Time>(0.12), in<Tokens>(0), C, G,
                                Wt, B, X, in<Number>(1))
                .value(),
            0.12);
  // Over the three chunks they add the prompt's 64 ms, shared 24 + 24 +
  // 16 ms: 304 + 304 + 216 = 824 ms (760 ms without).
  EXPECT_NEAR(chunkedPrefillTime(Prefill, in<Time>(0.12), S, C, G, Wt, B, X,
                                 in<Number>(1))
                  .value(),
              0.824, 1e-12);
}

TEST(ServingWall, PackedChunksShareOneStepsSlack) {
  // Prompts of 100 tokens, prefilled alone in 10 ms; 400-token chunks, so
  // k = 2 prompts share an iteration. The decode step takes 20 ms over 100
  // tokens.
  const Tokens S = in<Tokens>(100), C = in<Tokens>(400), B = in<Tokens>(100);
  const Time Step = in<Time>(0.020);
  auto extra = [&](double Prefill, double Gemm, double Weights, double K) {
    return chunkExtraTime(in<Time>(Prefill), Step, S, C, in<Time>(Gemm),
                          in<Time>(Weights), B, in<Number>(K), in<Time>(0),
                          in<Number>(1))
        .value();
  };
  // Compute-bound step (20 ms of GEMMs over 5 ms of weights, no slack):
  // the two prompts' 200 tokens add 20 ms x 200 / 100 = 40 ms to the step,
  // max(2 x 10, 20 + 40) = 60 ms, so each adds (60 - 20) / 2 = 20 ms, its
  // own GEMMs. (Its own iteration less half the step, 40 - 10 = 30 ms,
  // would charge half the step again.)
  EXPECT_NEAR(extra(0.010, 0.020, 0.005, 2), 0.020, 1e-12);
  // Memory-bound step (2 ms of GEMMs under 20 ms of weights, 18 ms of
  // slack): the 4 ms of chunk GEMMs hide, max(20, 20 + 0) = 20 ms: none.
  EXPECT_NEAR(extra(0.010, 0.002, 0.020, 2), 0.0, 1e-12);
  // A prefill longer than the step (30 ms alone): the iteration is the two
  // prefills, 60 ms, and each adds (60 - 20) / 2 = 20 ms = 30 - 20 / 2.
  EXPECT_NEAR(extra(0.030, 0.002, 0.020, 2), 0.020, 1e-12);
  // Partial slack (2 ms of GEMMs under 5 ms of weights, 3 ms of slack):
  // the two prompts' 4 ms of chunk GEMMs hide but for 1 ms, max(20, 20 +
  // 1) = 21 ms, 0.5 ms each. Alone, each prompt's 2 ms would hide whole;
  // its own iteration less half the step would charge 20 - 10 = 10 ms.
  EXPECT_NEAR(extra(0.010, 0.002, 0.005, 2), 0.0005, 1e-12);
  // A fractional count of prompts waiting, k = 1.5: 150 tokens, 3 ms of
  // chunk GEMMs against the 3 ms of slack: nothing added, max(15, 20) =
  // 20 ms, none.
  EXPECT_NEAR(extra(0.010, 0.002, 0.005, 1.5), 0.0, 1e-12);
  // One prompt an iteration: its iteration less the step, 20 + 20 - 20.
  EXPECT_NEAR(extra(0.010, 0.020, 0.005, 1), 0.020, 1e-12);
  // No prompt shares nothing.
  EXPECT_TRUE(std::isnan(extra(0.010, 0.020, 0.005, 0)));
  // Each prompt's attention and communication (3 ms of its 10 ms alone)
  // come with its chunk: on the memory-bound step that hid both prompts'
  // GEMMs, max(20, 20 + 0 + 2 x 3) = 26 ms, 3 ms each.
  EXPECT_NEAR(chunkExtraTime(in<Time>(0.010), Step, S, C, in<Time>(0.002),
                             in<Time>(0.020), B, in<Number>(2), in<Time>(0.003),
                             in<Number>(1))
                  .value(),
              0.003, 1e-12);
}

TEST(ServingWall, PrefixCachingComputesOnlyTheMisses) {
  // 2,000 prompt tokens, 75% found in the cache: 500 computed.
  EXPECT_DOUBLE_EQ(
      prefillTokensComputed(in<Tokens>(2000), in<Number>(0.75)).value(), 500);
}

TEST(ServingWall, DisaggregatedLlama70BKVTransferTTFTAndLatency) {
  // Llama-3-70B KV cache: 320 KiB/token in bf16. A 2,048-token prompt is
  // 2,048 x 327,680 B = 671,088,640 B; over eight 50 GB/s NDR ports in
  // parallel (400 GB/s) with 1 us latency: 1.6777216 ms + 1 us.
  BytesPerToken KV = kvBytesPerToken(in<Number>(80), in<Number>(8),
                                     in<Number>(128), in<Bytes>(2));
  Time Transfer = kvTransferTime(in<Tokens>(2048), KV, in<Bandwidth>(400e9),
                                 in<Time>(1e-6));
  EXPECT_NEAR(Transfer.value(), 671088640.0 / 400e9 + 1e-6, 1e-15);
  EXPECT_NEAR(Transfer.value() * 1e3, 1.6787216, 1e-9);

  // No queueing, a 250 ms prefill: TTFT 251.6787216 ms. 128 output tokens
  // at a 20 ms TPOT: 251.6787216 + 127 x 20 = 2,791.6787216 ms.
  Time TTFT = timeToFirstToken(in<Time>(0), in<Time>(0.25), Transfer);
  EXPECT_NEAR(TTFT.value() * 1e3, 251.6787216, 1e-9);
  Time L = endToEndLatency(TTFT, in<Time>(0.02), in<Tokens>(128));
  EXPECT_NEAR(L.value() * 1e3, 2791.6787216, 1e-9);
  // A single output token is the first token.
  EXPECT_EQ(endToEndLatency(TTFT, in<Time>(0.02), in<Tokens>(1)).value(),
            TTFT.value());

  // 32 requests in flight: 32 x 128 / 2.7916787216 s = 1,467.22 tok/s per
  // replica, 183.40 per GPU at TP 8.
  TokenRate X = replicaThroughput(in<Number>(32), in<Tokens>(128), L);
  EXPECT_NEAR(X.value(), 4096 / 2.7916787216, 1e-9);
  EXPECT_NEAR(X.value(), 1467.22, 0.005);
  EXPECT_NEAR(throughputPerDevice(X, in<Number>(8)).value(), 183.40, 0.005);
}

TEST(ServingWall, MixtralActiveParamsMatchThePublished12Point9B) {
  // Mixtral 8x7B: 32 layers, d 4,096, 32 heads, 8 KV heads (head dim 128),
  // FFN 14,336 (SwiGLU, 3 matrices), 8 experts, top 2, vocab 32,000.
  // Dense: attention 32 x (2 x 4096^2 + 2 x 4096 x 1024) = 1,342,177,280;
  // embeddings and head 2 x 32,000 x 4,096 = 262,144,000; routers
  // 32 x 4,096 x 8 = 1,048,576; norms 65 x 4,096 = 266,240.
  // Routed experts: 32 x 8 x 3 x 4,096 x 14,336 = 45,097,156,608.
  double Dense = 1342177280.0 + 262144000 + 1048576 + 266240;
  double Experts = 45097156608.0;
  // Total 46.70e9 (published: 46.7B).
  EXPECT_NEAR((Dense + Experts) / 1e9, 46.7, 0.005);
  Number Active = moeActiveParams(in<Number>(Dense), in<Number>(Experts),
                                  in<Number>(2), in<Number>(8));
  EXPECT_DOUBLE_EQ(Active.value(), Dense + Experts / 4);
  // Published: 12.9B active parameters (Mistral AI, Mixtral of experts).
  EXPECT_NEAR(Active.value() / 1e9, 12.9, 0.05);
}

TEST(ServingWall, Llama70BKVCacheAtItsOwnPrecision) {
  // 2 x 80 layers x 8 KV heads x 128 head dim: 320 KiB/token in bf16, and
  // 160 KiB in fp8 while the weights stay bf16 (70.6e9 x 2 B = 141.2 GB).
  Number L = in<Number>(80), KVHeads = in<Number>(8), HeadDim = in<Number>(128);
  Bytes Bf16 = in<Bytes>(2), Fp8 = in<Bytes>(1);
  EXPECT_DOUBLE_EQ(kvBytesPerToken(L, KVHeads, HeadDim, Bf16).value(),
                   320 * 1024.0);
  EXPECT_DOUBLE_EQ(kvBytesPerToken(L, KVHeads, HeadDim, Fp8).value(),
                   160 * 1024.0);
  EXPECT_DOUBLE_EQ(
      weightBytesPerDevice(in<Number>(70.6e9), Bf16, One, One).value(),
      141.2e9);
  // Multi-query attention (one KV head) in bf16: 2 x 80 x 128 x 2 = 40 KiB.
  EXPECT_DOUBLE_EQ(kvBytesPerToken(L, One, HeadDim, Bf16).value(), 40 * 1024.0);
}

TEST(ServingWall, FormulasCarryWallAndDimensions) {
  EXPECT_EQ(formula(FormulaId::SpeculativeTokensPerStep).W, Wall::Serving);
  EXPECT_TRUE(
      formula(FormulaId::SpeculativeTokensPerStep).Result.isDimensionless());
  EXPECT_EQ(formula(FormulaId::ChunkedPrefillTime).Result.str(), "s");
  EXPECT_EQ(formula(FormulaId::KVTransferTime).Params[1].str(), "B/tok");
  EXPECT_EQ(formula(FormulaId::ReplicaThroughput).Result.str(), "tok/s");
  EXPECT_EQ(formula(FormulaId::PrefillTokensComputed).Result.str(), "tok");
  EXPECT_EQ(formula(FormulaId::EndToEndLatency).Arity, 3u);
  // The graph's double adapter agrees with the typed call.
  double In[] = {0.8, 4};
  EXPECT_EQ(formula(FormulaId::SpeculativeTokensPerStep).Eval(In),
            speculativeTokensPerStep(in<Number>(0.8), in<Number>(4)).value());
}

} // namespace

namespace {

TEST(ServingWall, PrefillStallsWithoutChunking) {
  using namespace mlsc::q;
  using namespace mlsc::walls;
  Time TPOT = in<Time>(8.686e-3), Prefill = in<Time>(69.44e-3);
  RequestRate Rate = in<RequestRate>(3.875);
  // Without chaining (prompts that arrive during a stall's prefills wait
  // for the next gap), the count is Poisson.
  RequestRate NoChain = in<RequestRate>(0);
  // A gap holds a prefill with probability 1 - exp(-3.875 x 8.686 ms)
  // = 3.310%; P(N <= 0) = 0.9669 < 0.99 <= P(N <= 1) = 0.99945, so the
  // p99 gap is one decode step and one prefill: 78.126 ms.
  EXPECT_NEAR(prefillStallProbability(TPOT, Rate).value(),
              -std::expm1(-3.875 * 8.686e-3), 1e-15);
  EXPECT_DOUBLE_EQ(
      prefillStallItl(TPOT, Prefill, Prefill, Rate, NoChain, in<Number>(0.99))
          .value(),
      8.686e-3 + 69.44e-3);
  // At 1 req/s P(N = 0) = 0.99135 >= 0.99: no stall at the p99.
  EXPECT_DOUBLE_EQ(prefillStallItl(TPOT, Prefill, Prefill, in<RequestRate>(1),
                                   NoChain, in<Number>(0.99))
                       .value(),
                   8.686e-3);
  // Heavier: mean 3.875 x 1 s = 3.875 prefills per gap; the Poisson p99
  // is 9 (P(N <= 8) = 0.9821, P(N <= 9) = 0.9934).
  EXPECT_DOUBLE_EQ(prefillStallItl(in<Time>(1), Prefill, Prefill, Rate, NoChain,
                                   in<Number>(0.99))
                       .value(),
                   1 + 9 * 69.44e-3);
  // Chained (prefills first: prompts that arrive during the stall's
  // prefills run before the decode resumes), the count is a Borel busy
  // period from each of the Poisson(m) arrivals. m = 0.033658, rho =
  // 3.875 x 69.44 ms = 0.26908: P(N = 0) = e^-m = 0.966902, P(N = 1) = m
  // e^-m e^-rho = 0.024866, together 0.99177 >= 0.99: still one prefill.
  EXPECT_DOUBLE_EQ(
      prefillStallItl(TPOT, Prefill, Prefill, Rate, Rate, in<Number>(0.99))
          .value(),
      8.686e-3 + 69.44e-3);
  // Heavier prompts (an 8B model's 1,500 tokens on an H100 at 6 req/s):
  // TPOT 8.792 ms, prefill 38.3 ms, m = 0.052752, rho = 0.2298. P(N = 0)
  // = 0.948616, P(N = 1) = m P0 e^-rho = 0.039768 (0.988384 in all, <
  // 0.99); Panjer, g_2 = m / 2 (b_1 g_1 + 2 b_2 g_0) with b_2 = e^-2rho
  // (2 rho) / 2! = 0.14514: P(N = 2) = 0.008097, 0.99648 >= 0.99. The p99
  // gap holds two prefills, 8.792 + 2 x 38.3 = 85.39 ms (the simulator:
  // 84.64 ms); as a Poisson count (P(K <= 1) = P0 (1 + m) = 0.99866), one.
  Time T2 = in<Time>(8.792e-3), P2 = in<Time>(38.3e-3);
  RequestRate R2 = in<RequestRate>(6);
  EXPECT_NEAR(prefillStallItl(T2, P2, P2, R2, R2, in<Number>(0.99)).value(),
              8.792e-3 + 2 * 38.3e-3, 1e-15);
  EXPECT_NEAR(
      prefillStallItl(T2, P2, P2, R2, NoChain, in<Number>(0.99)).value(),
      8.792e-3 + 38.3e-3, 1e-15);
  // Prefills that take all the time chain without end. A mean of 5 or
  // more takes the Cornish-Fisher expansion through the compound's
  // cumulants (B's: 1 / (1 - rho), rho / (1 - rho)^3, rho (1 + 2 rho) /
  // (1 - rho)^5): m = 1,000, rho = 0.5: E[B] = 2, E[B^2] = 4 + 4 = 8,
  // E[B^3] = 32 + 3 x 4 x 2 + 8 = 64; mean 2,000, sd sqrt(8,000) =
  // 89.443, skew 64,000 / 8,000^1.5 = 0.08944: p99 2,000 + 89.443 x
  // (2.3263 + 4.4119 x 0.08944 / 6) = 2,213.96, less the half count of
  // continuity, 2,214 prefills.
  EXPECT_EQ(
      prefillStallItl(T2, in<Time>(1), in<Time>(1), R2, R2, in<Number>(0.99))
          .value(),
      std::numeric_limits<double>::infinity());
  EXPECT_NEAR(prefillStallItl(in<Time>(1000), in<Time>(0.5), in<Time>(0.5),
                              in<RequestRate>(1), in<RequestRate>(1),
                              in<Number>(0.99))
                  .value(),
              1000 + 2214 * 0.5, 1e-9);
}

/// The quickstart's request under load, as the TPOT tests take it: 256
/// output tokens, decode step 8.686 ms, mean gap 8.686 / 0.7309 = 11.884
/// ms, other requests' prefills of 69.44 ms at 3.875/s.
struct QuickstartRequest {
  Time TPOT = in<Time>(8.686e-3), Mean = in<Time>(8.686e-3 / 0.7309),
       Prefill = in<Time>(69.44e-3);
  RequestRate Rate = in<RequestRate>(3.875);
};

TEST(ServingWall, OutputQuantileExtraDecodeStaysInfiniteUnderOverload) {
  // 490.5 tokens at the p99 against a mean of 100, 10 ms a token: +3.905
  // s; the median's 70.71 tokens: -0.2929 s. When the mean time per token
  // is unbounded (the prefills fill the replica), so is the extra decode,
  // even for a percentile at the mean (0 x inf had made the latency NaN).
  using namespace mlsc::q;
  using namespace mlsc::walls;
  Time Tpot = in<Time>(0.010),
       Unbounded = in<Time>(std::numeric_limits<double>::infinity());
  auto at = [&](double Out, Time T) {
    return outputQuantileExtraDecode(in<Tokens>(Out), in<Tokens>(100), T)
        .value();
  };
  EXPECT_NEAR(at(490.5, Tpot), 3.905, 1e-12);
  EXPECT_NEAR(at(70.71, Tpot), -0.2929, 1e-12);
  EXPECT_TRUE(std::isinf(at(100, Unbounded)) && at(100, Unbounded) > 0);
  EXPECT_TRUE(std::isinf(at(70.71, Unbounded)) && at(70.71, Unbounded) > 0);
}

TEST(ServingWall, RequestStallSpreadIsTheCountsDeviationTimesAPrefill) {
  // The quickstart's request of RequestTpotAveragesTheStallsOut below: 255
  // gaps, prefills of 69.44 ms at 3.875/s, 12.012 of them on average (255
  // x 11.884 ms x 3.875/s = 11.743, and those that reach its engine during
  // its own prefill), median 12, p99 25. Beyond the mean the service holds
  // (255 x (11.884 - 8.686) ms = 11.743 x 69.44 ms = 815.5 ms): at the
  // median 12 x 69.44 - 815.5 = +17.8 ms, at the p99 25 x 69.44 - 815.5 =
  // +920.5 ms. (Without the own start: median 11, -51.6 ms.)
  using namespace mlsc::q;
  using namespace mlsc::walls;
  const QuickstartRequest Q;
  Time TPOT = Q.TPOT, Mean = Q.Mean, Prefill = Q.Prefill;
  RequestRate Rate = Q.Rate;
  auto at = [&](double P, double Out = 256) {
    return requestStallSpread(TPOT, Mean, Prefill, Rate, Rate, in<Tokens>(Out),
                              in<Number>(P))
        .value();
  };
  double Held = 255 * (8.686e-3 / 0.7309 - 8.686e-3);
  EXPECT_NEAR(at(0.5), 12 * 69.44e-3 - Held, 1e-12);
  EXPECT_NEAR(at(0.99), 25 * 69.44e-3 - Held, 1e-12);
  EXPECT_NEAR(at(0.5), 17.8e-3, 0.1e-3);
  EXPECT_NEAR(at(0.99), 920.6e-3, 0.1e-3);
  // One output token: no gap, nothing to spread.
  EXPECT_EQ(at(0.99, 1), 0.0);
  // Prefills that fill the replica: the mean gap is unbounded, and so is
  // the latency it adds to (not inf - inf = NaN).
  Time Unbounded = in<Time>(std::numeric_limits<double>::infinity());
  EXPECT_TRUE(
      std::isinf(requestStallSpread(TPOT, Unbounded, Prefill, Rate, Rate,
                                    in<Tokens>(256), in<Number>(0.99))
                     .value()));
}

TEST(ServingWall, RequestTpotAveragesTheStallsOut) {
  // Issue 12, item 6: TPOT as benchmarks report it, (E2E - TTFT) /
  // (output - 1), one figure per request. The quickstart's request: 256
  // output tokens, decode step 8.686 ms, mean gap 11.88 ms, other requests'
  // prefills of 69.44 ms at 3.875/s.
  using namespace mlsc::q;
  using namespace mlsc::walls;
  const QuickstartRequest Q;
  Time TPOT = Q.TPOT, Mean = Q.Mean, Prefill = Q.Prefill;
  RequestRate Rate = Q.Rate;
  Tokens Output = in<Tokens>(256);
  // Its 255 gaps see m = 3.875 x 255 x 8.686 ms = 8.583 arrivals, and
  // the prompts that reach its engine during its own prefill run before
  // its first decode (prompts first): rho (1 - rho) = 0.19668 more, m =
  // 8.7795. Each brings the busy period of the prompts that arrive during
  // its stall (Borel, rho = 3.875 x 69.44 ms = 0.26908: mean 1.3681,
  // E[B^2] 2.5609): 12.012 prefills on average, variance m E[B^2] =
  // 22.483, sd 4.7417, skew m E[B^3] / sd^3 = 0.6072. Cornish-Fisher:
  // median 12.012 - 4.7417 x 0.6072 / 6 = 11.532, p99 12.012 + 4.7417 x
  // (2.3263 + 4.4119 x 0.6072 / 6) = 25.159; less the half count of
  // continuity, 12 and 25. Without the own start (m = 8.583): 11 and 25;
  // the Poisson count of mean 11.743 gave 12 and 20.
  auto at = [&](double P) {
    return requestTpotQuantile(TPOT, Mean, Prefill, Rate, Rate, Output,
                               in<Number>(P))
        .value();
  };
  EXPECT_NEAR(at(0.5), 8.686e-3 + 12 * 69.44e-3 / 255, 1e-15);
  EXPECT_NEAR(at(0.99), 8.686e-3 + 25 * 69.44e-3 / 255, 1e-15);
  // The inter-token latency's p99 is a whole prefill above the step; a
  // request's TPOT p99 is far below it: 15.49 ms against 78.13 ms.
  EXPECT_LT(at(0.99), prefillStallItl(TPOT, Prefill, Prefill, Rate, Rate,
                                      in<Number>(0.99))
                          .value());
  // One output token has no gap: its TPOT is the step's.
  EXPECT_EQ(requestTpotQuantile(TPOT, Mean, Prefill, Rate, Rate, in<Tokens>(1),
                                in<Number>(0.99))
                .value(),
            8.686e-3);
  // A long output under heavy load: 8,001 tokens, steps of 1 s, prefills
  // of 1 s at 0.3/s (rho = 0.3, a mean gap of 1 / 0.7 s): m = 2,400
  // arrivals (2,400.21 with its own start's 0.3 x 0.7), 3,428.87 prefills
  // on average (variance 2,400.21 x 2.91545 = 6,997.7, sd 83.652, skew
  // 0.039034): p99 3,428.87 + 83.652 x (2.3263 + 4.4119 x 0.039034 / 6) =
  // 3,625.87, 3,626 prefills; median 3,428.33, 3,428.
  Time One = in<Time>(1);
  auto heavy = [&](double P) {
    return requestTpotQuantile(One, in<Time>(1 / 0.7), One,
                               in<RequestRate>(0.3), in<RequestRate>(0.3),
                               in<Tokens>(8001), in<Number>(P))
        .value();
  };
  EXPECT_DOUBLE_EQ(heavy(0.99), 1 + 3626.0 / 8000);
  EXPECT_DOUBLE_EQ(heavy(0.5), 1 + 3428.0 / 8000);
  // Unchained (behind a batcher), the Poisson count of mean 11.743: P(N
  // <= 11) = 0.4913, P(N <= 12) = 0.6053, so the median is 12; P(N <= 19)
  // = 0.9826, P(N <= 20) = 0.9907, so the 99th percentile is 20.
  auto poisson = [&](double P) {
    return requestTpotQuantile(TPOT, Mean, Prefill, Rate, in<RequestRate>(0),
                               Output, in<Number>(P))
        .value();
  };
  EXPECT_NEAR(poisson(0.5), 8.686e-3 + 12 * 69.44e-3 / 255, 1e-15);
  EXPECT_NEAR(poisson(0.99), 8.686e-3 + 20 * 69.44e-3 / 255, 1e-15);
  // Without other requests' prefills every gap is the step.
  EXPECT_EQ(requestTpotQuantile(TPOT, TPOT, Prefill, in<RequestRate>(0),
                                in<RequestRate>(0), Output, in<Number>(0.99))
                .value(),
            8.686e-3);
}

/// The busy-period count behind ITL p99 at gaps, prefills and shares of
/// 1 s: m arrivals a gap and rho a second chaining, read back as ITL - 1.
double stallCount(double M, double Rho, double P) {
  using namespace mlsc::q;
  return mlsc::walls::prefillStallItl(in<Time>(1), in<Time>(1), in<Time>(1),
                                      in<RequestRate>(M), in<RequestRate>(Rho),
                                      in<Number>(P))
             .value() -
         1;
}

TEST(ServingWall, HeavyStallsAreSummedExactly) {
  // Prefills that take most of the time (rho over 0.5) chain into long
  // busy periods whose count the Cornish-Fisher expansion misses (a
  // review: 3 where the exact sum gives 26, and a solve over the arrival
  // rate that was not monotone where the branch switched at a mean of 5):
  // summed by Panjer's recursion instead. Gaps of 1 s, prefills of 1 s, m
  // arrivals and a chaining rate of rho a second; the counts are the
  // exact sums' (a Python Panjer in long double, checked by Monte Carlo;
  // the same as Consul's generalized Poisson terms summed in long double).
  using namespace mlsc::q;
  using namespace mlsc::walls;
  EXPECT_EQ(stallCount(4.999, 0.9, 0.5), 26);
  EXPECT_EQ(stallCount(5, 0.9, 0.5), 26);
  EXPECT_EQ(stallCount(10, 0.95, 0.5), 103);
  EXPECT_EQ(stallCount(5, 0.9, 0.9), 121);
  EXPECT_EQ(stallCount(5, 0.8, 0.99), 121);
  // Past 256 terms (the old cut-off, where it jumped to 5,911).
  EXPECT_EQ(stallCount(0.3, 0.98, 0.99), 254);
  EXPECT_EQ(stallCount(0.305, 0.98, 0.99), 260);
}

TEST(ServingWall, LongBusyPeriodsAreApproximated) {
  // Past 64 counts the sums give way to a continuous law (summed to 4,096
  // terms, they took 68 s for a million-point sweep and timed the sanitizer
  // suite out): the inverse Gaussian shifted to the count's first three
  // cumulants. Each is held to one count of the exact quantile of Consul's
  // generalized Poisson P(N = n) = m (m + n rho)^{n-1} e^{-m - n rho} / n!,
  // summed term by term in long double (a throwaway C++ program).
  using namespace mlsc::q;
  using namespace mlsc::walls;
  struct Case {
    double M, Rho, P, Exact;
  };
  for (Case C : {Case{2, 0.97, 0.99, 1165}, Case{2, 0.97, 0.999, 3594},
                 Case{5, 0.9, 0.999, 643}, Case{20, 0.9, 0.99, 707},
                 Case{20, 0.97, 0.999, 7746}, Case{100, 0.9, 0.999, 2404},
                 Case{600, 0.97, 0.5, 19472}, Case{600, 0.97, 0.999, 39514},
                 Case{600, 0.3, 0.999, 991}, Case{100, 0.3, 0.99, 185},
                 Case{20, 0.5, 0.999, 91}, Case{2, 0.99, 0.999, 20239}})
    EXPECT_NEAR(stallCount(C.M, C.Rho, C.P), C.Exact, 1)
        << "m " << C.M << " rho " << C.Rho << " p " << C.P;
  // The median at m 20, rho 0.97 is the exact 373; at m 2, rho 0.9 (mean
  // 20, sd 44.7: the continuous law) the exact sums give 6 at the median,
  // 50 at p 0.9 and 219 at p 0.99.
  EXPECT_EQ(stallCount(20, 0.97, 0.5), 373);
  EXPECT_NEAR(stallCount(2, 0.9, 0.5), 6, 1);
  EXPECT_NEAR(stallCount(2, 0.9, 0.9), 50, 1);
  EXPECT_NEAR(stallCount(2, 0.9, 0.99), 219, 1);
  // Monotone in the arrival rate across the switch (a solve bisects it).
  double Last = 0;
  for (double M = 1; M <= 40; M += 0.25) {
    double K = stallCount(M, 0.9, 0.99);
    EXPECT_GE(K, Last - 0.01 * Last) << "m " << M;
    Last = std::max(Last, K);
  }
}

TEST(ServingWall, ShortPromptsShareTheStallsPasses) {
  // Short prompts batch into one pass: a stall's first prompt costs its
  // own prefill, each further one waiting with it only its share of a
  // batched pass, which also sets how fast they chain (a review: rho at
  // the solo prefill reached 1 on a stable queue, and ITL p99 read 40 min
  // where the simulator gave 216 ms). Steps of 20 ms, prefills of 50 ms
  // alone and 5 ms in a batch, 60 prompts a second: m = 1.2, rho = 0.3;
  // P(N <= 7) = 0.98540, P(N <= 8) = 0.99178 (Panjer), so ITL p99 = 20 +
  // 50 + 7 x 5 = 105 ms, where eight solo prefills would read 420 ms.
  using namespace mlsc::q;
  using namespace mlsc::walls;
  RequestRate R = in<RequestRate>(60);
  EXPECT_NEAR(prefillStallItl(in<Time>(0.02), in<Time>(0.05), in<Time>(0.005),
                              R, R, in<Number>(0.99))
                  .value(),
              0.105, 1e-12);
  // No stall at the percentile: the step alone.
  EXPECT_EQ(prefillStallItl(in<Time>(0.02), in<Time>(0.05), in<Time>(0.005),
                            in<RequestRate>(0.1), R, in<Number>(0.99))
                .value(),
            0.02);
}

TEST(ServingWall, PoissonStallCountsOfAnySize) {
  // Unchained stalls (a batcher's batches, a window apart) are a Poisson
  // count. A gap of 8,000 s with prefills of 1 s at 0.4/s: 3,200 of them
  // on average. exp(-3,200) underflows a double, so the quantile is summed
  // in logs from ten standard deviations below the mean; it matches the
  // normal approximation 3,200 + 2.326 x sqrt(3,200) + (2.326^2 - 1) / 6
  // = 3,332.3: 3,332 at the p99 (3,200 at the median).
  using namespace mlsc::q;
  using namespace mlsc::walls;
  const RequestRate NoChain = in<RequestRate>(0);
  auto heavy = [&](double P) {
    return prefillStallItl(in<Time>(8000), in<Time>(1), in<Time>(1),
                           in<RequestRate>(0.4), NoChain, in<Number>(P))
        .value();
  };
  EXPECT_DOUBLE_EQ(heavy(0.99), 8000 + 3332.0);
  EXPECT_DOUBLE_EQ(heavy(0.5), 8000 + 3200.0);
  // The sum's first term is kept for the last mean a thread saw: the
  // quickstart's gap after the heavy one gives the same count (one
  // prefill at the p99), and the heavy one again its own.
  const QuickstartRequest Q;
  EXPECT_DOUBLE_EQ(prefillStallItl(Q.TPOT, Q.Prefill, Q.Prefill, Q.Rate,
                                   NoChain, in<Number>(0.99))
                       .value(),
                   8.686e-3 + 69.44e-3);
  EXPECT_DOUBLE_EQ(heavy(0.99), 8000 + 3332.0);
  // A mean past 10^12 takes the normal approximation (the walk would not
  // end): 4e15 prefills (0.5/s over 8e15 s), p99 4e15 + 2.3263 x 6.325e7
  // + 0.735 = 4e15 + 1.4713e8.
  double Huge = prefillStallItl(in<Time>(8e15), in<Time>(1), in<Time>(1),
                                in<RequestRate>(0.5), NoChain, in<Number>(0.99))
                    .value();
  EXPECT_NEAR(Huge - 8e15 - 4e15, 1.4713e8, 1e4);
}

TEST(ServingWall, ChunkedFirstTokenCountsTheRidingChunks) {
  // Chunked prefill under load: the iterations that carry a request's
  // chunks to its first token also carry the chunks of the prompts that
  // arrive meanwhile, in the budget its own chunks leave. Other prompts at
  // 20/s, mean iterations of 100 ms, prompts of 500 tokens under a budget
  // of 4,096: one iteration, with room for 3,596 tokens (7 prompts), and a
  // Poisson count of mean 20 x 0.1 = 2 arriving during the iteration in
  // flight (those of its own iteration come after it). P(N <= 1) = 3 e^-2 =
  // 0.4060, P(N <= 2) = 5 e^-2 = 0.6767: the median is 2. P(N <= 5) =
  // 0.9834, P(N <= 6) = 0.9955: the 99th percentile is 6. Each adds one
  // prompt's chunk extra time, 15 ms, to a first token of 120 ms: 150 ms
  // and 210 ms.
  using namespace mlsc::q;
  using namespace mlsc::walls;
  Time First = in<Time>(120e-3), Extra = in<Time>(15e-3),
       Iteration = in<Time>(100e-3);
  RequestRate Rate = in<RequestRate>(20);
  auto at = [&](Time Iter, double Prompt, double Chunk, double P) {
    return chunkedFirstTokenQuantile(First, Extra, Rate, Iter,
                                     in<Tokens>(Prompt), in<Tokens>(Chunk),
                                     in<Number>(P), First, First, in<Number>(0))
        .value();
  };
  EXPECT_NEAR(at(Iteration, 500, 4096, 0.5), 0.150, 1e-15);
  EXPECT_NEAR(at(Iteration, 500, 4096, 0.99), 0.210, 1e-15);
  // A budget of 1,000 leaves room for one other prompt: 135 ms at both.
  EXPECT_NEAR(at(Iteration, 500, 1000, 0.5), 0.135, 1e-15);
  EXPECT_NEAR(at(Iteration, 500, 1000, 0.99), 0.135, 1e-15);
  // A prompt of 2,100 tokens in chunks of 512: its 5 iterations (arrivals
  // over the 50 ms in flight and its first 4 iterations, 4/5 of 120 ms:
  // 20 x 0.146 = 2.92 on average, 0 with probability 0.054) fill their
  // budget but for 5 x 512 - 2,100 = 460 tokens, which the next prompt's
  // first chunk takes: 460 / 2,100 of its 15 ms, 3.286 ms, at the median
  // and the p99 alike.
  const double Room = 0.120 + 460.0 / 2100 * 0.015;
  EXPECT_NEAR(at(in<Time>(50e-3), 2100, 512, 0.5), Room, 1e-15);
  EXPECT_NEAR(at(in<Time>(50e-3), 2100, 512, 0.99), Room, 1e-15);
  // At the 5th percentile no prompt arrives: the first token alone.
  EXPECT_EQ(at(in<Time>(50e-3), 2100, 512, 0.05), 0.120);
  // A prompt that fills its chunks exactly leaves no room.
  EXPECT_EQ(at(in<Time>(50e-3), 2048, 512, 0.99), 0.120);
  // No other prompts: the first token alone.
  EXPECT_EQ(chunkedFirstTokenQuantile(
                First, Extra, in<RequestRate>(0), Iteration, in<Tokens>(500),
                in<Tokens>(4096), in<Number>(0.99), First, First, in<Number>(0))
                .value(),
            120e-3);
  // An unbounded rate has no quantile: +inf, never a finite guess.
  EXPECT_TRUE(
      std::isinf(chunkedFirstTokenQuantile(
                     First, Extra,
                     in<RequestRate>(std::numeric_limits<double>::infinity()),
                     Iteration, in<Tokens>(500), in<Tokens>(4096),
                     in<Number>(0.5), First, First, in<Number>(0))
                     .value()));
}

TEST(ServingWall, ChunkedFirstTokenWithPromptsThatVaryIsTheCompoundsQuantile) {
  // Prompts with a spread (cv 0.5): a request's own first token F is a
  // shifted lognormal through its median, 60 ms, and 99th percentile, 150
  // ms; the prompts that arrive beside it are Poisson of mean 20 x 0.1 =
  // 2, each adding 15 ms, at most 7 of them (500 of 4,096 tokens). Adding
  // the two 99th percentiles reads 150 + 6 x 15 = 240 ms; the compound's
  // 99th percentile, P(F + 15 min(K, 7.19) <= t) = 0.99, is checked
  // against 400,000 draws of F and K (a fixed seed).
  using namespace mlsc::q;
  using namespace mlsc::walls;
  const double F50 = 0.060, F99 = 0.150, Cv = 0.5, X = 0.015;
  auto at = [&](double P, double FirstAt) {
    return chunkedFirstTokenQuantile(
               in<Time>(FirstAt), in<Time>(X), in<RequestRate>(20),
               in<Time>(0.1), in<Tokens>(500), in<Tokens>(4096), in<Number>(P),
               in<Time>(F50), in<Time>(F99), in<Number>(Cv))
        .value();
  };
  const double Sigma = std::sqrt(std::log1p(Cv * Cv));
  const double Z99 = 2.3263478740408408;
  const double Scale = (F99 - F50) / std::expm1(Sigma * Z99),
               Offset = F50 - Scale;
  std::mt19937_64 Gen(7);
  std::normal_distribution<double> Normal;
  std::poisson_distribution<int> Count(2.0);
  std::vector<double> T(400000);
  for (double &V : T) {
    double F = Offset + Scale * std::exp(Sigma * Normal(Gen));
    V = F + X * std::min(static_cast<double>(Count(Gen)), 3596.0 / 500);
  }
  std::sort(T.begin(), T.end());
  for (double P : {0.5, 0.9, 0.99}) {
    double Drawn = T[static_cast<size_t>(P * T.size())];
    EXPECT_NEAR(at(P, F50), Drawn, 0.01 * Drawn) << P;
  }
  // Below the sum of the two quantiles at the 99th percentile (240 ms),
  // above F's own (150 ms).
  EXPECT_LT(at(0.99, F99), 0.240);
  EXPECT_GT(at(0.99, F99), 0.150);
  // No arrivals: F's own quantiles, 60 and 150 ms.
  auto alone = [&](double P) {
    return chunkedFirstTokenQuantile(
               in<Time>(F50), in<Time>(X), in<RequestRate>(0), in<Time>(0.1),
               in<Tokens>(500), in<Tokens>(4096), in<Number>(P), in<Time>(F50),
               in<Time>(F99), in<Number>(Cv))
        .value();
  };
  EXPECT_NEAR(alone(0.5), F50, 1e-12);
  EXPECT_NEAR(alone(0.99), F99, 1e-12);
  // The fit passes through F's p50 and p99 only: at p99.9 it gives 208.7
  // ms (15.02 + 44.98 e^(0.47238 x 3.0902) ms), but a 99.9th-percentile
  // prompt whose own first token takes 260 ms (another chunk) is never
  // served sooner.
  auto at999 = [&](double Own) {
    return chunkedFirstTokenQuantile(
               in<Time>(Own), in<Time>(X), in<RequestRate>(0), in<Time>(0.1),
               in<Tokens>(500), in<Tokens>(4096), in<Number>(0.999),
               in<Time>(F50), in<Time>(F99), in<Number>(Cv))
        .value();
  };
  EXPECT_NEAR(at999(0.150), Offset + Scale * std::exp(Sigma * 3.090232306),
              1e-9);
  EXPECT_EQ(at999(0.260), 0.260);
}

TEST(ServingWall, PipelinePrefillStallIsAConvoy) {
  using namespace mlsc::q;
  using namespace mlsc::walls;
  // pp 8: a prompt's 179.8 ms prefill holds each stage 22.48 ms; the
  // micro-batches behind it wait 179.8 - 42.23 = 137.6 ms, less the decode
  // step it replaces.
  EXPECT_NEAR(pipelinePrefillStall(in<Time>(179.8e-3 / 8), in<Number>(8),
                                   in<Time>(42.23e-3))
                  .value(),
              137.57e-3, 1e-9);
  // Without pipeline parallelism the stall is the whole share.
  EXPECT_DOUBLE_EQ(
      pipelinePrefillStall(in<Time>(35e-3), in<Number>(1), in<Time>(7e-3))
          .value(),
      35e-3);
  // A prompt shorter than the step it replaces still holds a stage.
  EXPECT_DOUBLE_EQ(
      pipelinePrefillStall(in<Time>(2e-3), in<Number>(2), in<Time>(10e-3))
          .value(),
      2e-3);
}

TEST(ServingWall, ConvoysMergeUnderLoad) {
  using namespace mlsc::q;
  using namespace mlsc::walls;
  // eval/simulate-pipeline.mls `busy`: pp 8, a 179.8 ms prefill, 22.475 ms
  // a stage, a 137.6 ms convoy, other prompts at 4 x 63/64 = 3.9375 req/s.
  // rho = 3.9375 x 22.475 ms = 0.08849, a = 3.9375 x (179.8 - 22.475) ms
  // = 0.61947; x e^(-a - rho / x) + a x = 1 - rho at x = 0.82636 (by
  // bisection, to 1e-12): r x = 3.2539 convoys a second. They cover C =
  // rho + a x = 0.60040 of the time, and a sequence would have spent
  // 179.8 - 137.6 = 42.2 ms of each anyway: f = 0.60040 - 3.2539 x 0.0422
  // = 0.46309, 0.46309 / 3.2539 = 142.32 ms a convoy (117.61 ms a prompt,
  // where the convoys apart give 137.6).
  const Time Share = in<Time>(179.8e-3 / 8), Convoy = in<Time>(137.6e-3);
  const Number Stages = in<Number>(8);
  const RequestRate Busy = in<RequestRate>(3.9375);
  EXPECT_NEAR(mergedConvoyRate(Busy, Share, Stages).value(), 3.9375 * 0.82636,
              2e-5);
  EXPECT_NEAR(mergedConvoyStall(Busy, Convoy, Share, Stages).value(),
              0.46309 / (3.9375 * 0.82636), 2e-6);
  // At 63/64 req/s the convoys rarely meet: x = 0.985385, f = 0.133794.
  const RequestRate Light = in<RequestRate>(63.0 / 64);
  EXPECT_NEAR(mergedConvoyRate(Light, Share, Stages).value(),
              63.0 / 64 * 0.985385, 2e-6);
  EXPECT_NEAR(mergedConvoyStall(Light, Convoy, Share, Stages).value(),
              0.133794 / (63.0 / 64 * 0.985385), 2e-6);
  // Far apart, the whole convoy; one stage, the prompts one after another,
  // as many convoys as prompts.
  EXPECT_NEAR(
      mergedConvoyStall(in<RequestRate>(1e-9), Convoy, Share, Stages).value(),
      137.6e-3, 1e-9);
  EXPECT_EQ(
      mergedConvoyStall(in<RequestRate>(0), Convoy, Share, Stages).value(),
      137.6e-3);
  EXPECT_EQ(mergedConvoyStall(in<RequestRate>(20), in<Time>(35e-3),
                              in<Time>(35e-3), in<Number>(1))
                .value(),
            35e-3);
  EXPECT_EQ(
      mergedConvoyRate(in<RequestRate>(20), in<Time>(35e-3), in<Number>(1))
          .value(),
      20);
  // The share stalled grows with the rate and stays under 1 while the
  // first stage keeps up; past it the convoys apart say so (f >= 1).
  auto share = [&](double R) {
    return mergedConvoyRate(in<RequestRate>(R), Share, Stages).value() *
           mergedConvoyStall(in<RequestRate>(R), Convoy, Share, Stages).value();
  };
  double Last = 0;
  for (double R : {0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 44.0}) {
    EXPECT_GT(share(R), Last) << R;
    EXPECT_LT(share(R), 1.0) << R;
    Last = share(R);
  }
  EXPECT_GE(share(45), 1.0);
  EXPECT_TRUE(std::isnan(
      mergedConvoyStall(in<RequestRate>(std::nan("")), Convoy, Share, Stages)
          .value()));
  EXPECT_TRUE(std::isnan(
      mergedConvoyRate(in<RequestRate>(std::nan("")), Share, Stages).value()));
}

TEST(ServingWall, RequestTpotWithoutASpreadIsTheSpreadsOneNode) {
  // A workload without `output_cv` and one with `output_cv = 0` ask the
  // same question; both counts hold the prompts that reach the request's
  // engine during its own prefill (rho (1 - rho)). A 2-token output at
  // the quickstart's rates (one gap; m = 3.875 x 11.884 ms + 0.19668 =
  // 0.24273, rho = 0.26908), Consul's P(N = n) = m (m + n rho)^(n-1)
  // e^-(m + n rho) / n!: P(N = 0) = e^-0.24273 = 0.78449, so the median is
  // the step; P(N <= 1) = 0.78449 + 0.24273 e^-0.51181 = 0.92998, P(N <=
  // 2) = 0.97338, P(N <= 3) = 0.98899, P(N <= 4) = 0.99520, so the p99 is
  // four stalls: 8.686 + 4 x 69.44 = 286.4 ms, the same on both paths.
  // Without the own start (m = 0.04605: P(N <= 1) = 0.98860, P(N <= 2) =
  // 0.99610) it read two: 147.6 ms.
  using namespace mlsc::q;
  using namespace mlsc::walls;
  const QuickstartRequest Q;
  auto plain = [&](double Out, double P) {
    return requestTpotQuantile(Q.TPOT, Q.Mean, Q.Prefill, Q.Rate, Q.Rate,
                               in<Tokens>(Out), in<Number>(P))
        .value();
  };
  auto oneNode = [&](double Out, double P) {
    return requestTpotQuantileSpread(Q.TPOT, Q.Mean, Q.Prefill, Q.Rate, Q.Rate,
                                     in<Tokens>(Out), in<Number>(0),
                                     in<Tokens>(1e6), in<Number>(P))
        .value();
  };
  EXPECT_DOUBLE_EQ(plain(2, 0.5), 8.686e-3);
  EXPECT_DOUBLE_EQ(plain(2, 0.99), 8.686e-3 + 4 * 69.44e-3);
  for (double P : {0.5, 0.9, 0.99})
    EXPECT_DOUBLE_EQ(plain(2, P), oneNode(2, P)) << P;
  // At 256 tokens the plain path reads its count by Cornish-Fisher (a mean
  // of 12.0), the one node by the exact sums: within one count.
  for (double P : {0.5, 0.9, 0.99})
    EXPECT_NEAR(plain(256, P), oneNode(256, P), 69.44e-3 / 255 + 1e-12) << P;
}

TEST(ServingWall, RequestTpotOverTheOutputsOwnLengths) {
  using namespace mlsc::q;
  using namespace mlsc::walls;
  // A 10 ms step, 12.5 ms on average with the stalls, 100 ms a prefill,
  // other prompts at 2 req/s, unchained: 0.025 stalls a gap. At one
  // output of 50 tokens (49 gaps) the count is Poisson(1.225), its p99 4:
  // 10 + 4 x 100 / 49 = 18.163 ms. With outputs of mean 50 and CV 1 the
  // 32 lognormal nodes run from 6 to 212 tokens (6, 9, 11, 13, ...); the
  // mixture's p99 is three prompts in the 22 gaps of a 23-token output
  // (P(k >= 3) = 1.8% there), 10 + 300 / 22 = 23.636 ms, and its median
  // one in 57 gaps, 11.754 ms (by enumerating the nodes' steps in Python,
  // test-independent).
  const Time Step = in<Time>(10e-3), Mean = in<Time>(12.5e-3),
             Prefill = in<Time>(0.1);
  const RequestRate R = in<RequestRate>(2), None = in<RequestRate>(0);
  const Tokens Out = in<Tokens>(50),
               NoLimit = in<Tokens>(std::numeric_limits<double>::infinity());
  const Number CV = in<Number>(1), P99 = in<Number>(0.99),
               P50 = in<Number>(0.5);
  EXPECT_NEAR(
      requestTpotQuantile(Step, Mean, Prefill, R, None, Out, P99).value(),
      10e-3 + 0.4 / 49, 1e-12);
  EXPECT_NEAR(requestTpotQuantileSpread(Step, Mean, Prefill, R, None, Out, CV,
                                        NoLimit, P99)
                  .value(),
              10e-3 + 0.3 / 22, 1e-12);
  EXPECT_NEAR(requestTpotQuantileSpread(Step, Mean, Prefill, R, None, Out, CV,
                                        NoLimit, P50)
                  .value(),
              10e-3 + 0.1 / 57, 1e-12);
  // Cut at 5 tokens every node has 4 gaps: the median meets no prompt, the
  // p99 a quarter of one: 35 ms.
  EXPECT_NEAR(requestTpotQuantileSpread(Step, Mean, Prefill, R, None, Out, CV,
                                        in<Tokens>(5), P99)
                  .value(),
              35e-3, 1e-12);
  EXPECT_EQ(requestTpotQuantileSpread(Step, Mean, Prefill, R, None, Out, CV,
                                      in<Tokens>(5), P50)
                .value(),
            10e-3);
  // No spread: one node at the mean length, the single length's count
  // (unchained, no own-start term: bit for bit); one-token outputs only,
  // or no prompt: the step.
  EXPECT_EQ(
      requestTpotQuantileSpread(Step, Mean, Prefill, R, None, Out,
                                in<Number>(0), NoLimit, P99)
          .value(),
      requestTpotQuantile(Step, Mean, Prefill, R, None, Out, P99).value());
  EXPECT_EQ(requestTpotQuantileSpread(Step, Mean, Prefill, R, None, Out, CV,
                                      in<Tokens>(1), P99)
                .value(),
            10e-3);
  EXPECT_EQ(requestTpotQuantileSpread(Step, Mean, Prefill, None, None, Out, CV,
                                      NoLimit, P99)
                .value(),
            10e-3);
  // Chained at 1 req/s (rho = 0.1: Consul's generalized Poisson counts of
  // mean 0.0225 a gap), and the prompts that arrive during the request's
  // own prefill and run before its first decode (rho (1 - rho) = 0.09 more
  // a request): p99 one prompt in the 5 gaps of the shortest node, 10 + 100
  // / 5 = 30 ms; median one in 54, 11.852 ms (the same enumeration).
  const RequestRate Chain = in<RequestRate>(1);
  EXPECT_NEAR(requestTpotQuantileSpread(Step, Mean, Prefill, R, Chain, Out, CV,
                                        NoLimit, P99)
                  .value(),
              10e-3 + 0.1 / 5, 1e-12);
  EXPECT_NEAR(requestTpotQuantileSpread(Step, Mean, Prefill, R, Chain, Out, CV,
                                        NoLimit, P50)
                  .value(),
              10e-3 + 0.1 / 54, 1e-12);
  // CV -> 0 reaches CV = 0 (every node at the mean length).
  EXPECT_EQ(requestTpotQuantileSpread(Step, Mean, Prefill, R, Chain, Out,
                                      in<Number>(1e-9), NoLimit, P99)
                .value(),
            requestTpotQuantileSpread(Step, Mean, Prefill, R, Chain, Out,
                                      in<Number>(0), NoLimit, P99)
                .value());
  // Counts past the exact sums: one length of 2,000 tokens at 0.025 stalls
  // a gap (a Poisson mean of 49.98, Cornish-Fisher) within one count of
  // the single length's (busyPeriodCountQuantile): 0.1 s / 1,999 a count.
  const Tokens Long = in<Tokens>(2000);
  for (const Number &Q : {P50, P99})
    EXPECT_NEAR(
        requestTpotQuantileSpread(Step, Mean, Prefill, R, None, Long,
                                  in<Number>(0), NoLimit, Q)
            .value(),
        requestTpotQuantile(Step, Mean, Prefill, R, None, Long, Q).value(),
        0.1 / 1999 + 1e-12);
  // Chained near saturation (rho = 0.97: the counts' mean is 33 times the
  // starting stalls', past the exact sums' reach): finite, over the
  // unchained p99, and rising with the outputs' spread held.
  const RequestRate Hot = in<RequestRate>(9.7);
  const double Near =
      requestTpotQuantileSpread(Step, Mean, Prefill, R, Hot, in<Tokens>(8),
                                in<Number>(0.3), NoLimit, P99)
          .value();
  EXPECT_TRUE(std::isfinite(Near));
  EXPECT_GT(Near, requestTpotQuantileSpread(Step, Mean, Prefill, R, None,
                                            in<Tokens>(8), in<Number>(0.3),
                                            NoLimit, P99)
                      .value());
  EXPECT_LT(Near, 1e3);
  // Near saturation the head stays exact: one length of 2 tokens (one
  // gap), rho = 0.971, a starting mean of 0.6238 + 0.971 x 0.029 = 0.652
  // stalls: P(none) = e^-0.652 = 0.521, so the median is the step itself,
  // though the count's bulk runs past a thousand (an inverse Gaussian for
  // all of it put P(none) at 0.499 and the median a stall higher).
  EXPECT_EQ(requestTpotQuantileSpread(Step, in<Time>(1.0755), Prefill,
                                      in<RequestRate>(20),
                                      in<RequestRate>(9.71), in<Tokens>(2),
                                      in<Number>(0), NoLimit, P50)
                .value(),
            10e-3);
  // A chain that never ends, and NaN.
  EXPECT_TRUE(std::isinf(requestTpotQuantileSpread(Step, Mean, Prefill, R,
                                                   in<RequestRate>(10), Out, CV,
                                                   NoLimit, P99)
                             .value()));
  EXPECT_TRUE(std::isnan(
      requestTpotQuantileSpread(Step, Mean, Prefill, R, None, Out,
                                in<Number>(std::nan("")), NoLimit, P99)
          .value()));
}

TEST(ServingWall, ChunkedConvoysShareTheirSlowCycles) {
  using namespace mlsc::q;
  using namespace mlsc::walls;
  // The passage in full chunks: eval/parallel-layouts.mls `s_pp8b64c`'s
  // 1,000-token prompt in chunks of 512 spends 184.3 ms in two iterations;
  // its second chunk holds 488 tokens, so 2 - 1.953 of a 42.95 ms step is
  // not slowed: 184.3 - 0.04688 x 42.95 = 182.29 ms. A prompt of one chunk
  // or less is its iteration whole; 4,100 tokens (8 chunks and 4 tokens)
  // hold the ninth iteration for 4 / 512 of one.
  const Time Dt = in<Time>(42.95e-3);
  const Tokens C512 = in<Tokens>(512);
  EXPECT_NEAR(
      chunkPassage(in<Time>(0.1843), Dt, in<Tokens>(1000), C512).value(),
      0.1843 - (2 - 1000.0 / 512) * 42.95e-3, 1e-15);
  EXPECT_EQ(chunkPassage(in<Time>(0.05), Dt, in<Tokens>(300), C512).value(),
            0.05);
  EXPECT_EQ(chunkPassage(in<Time>(0.1), Dt, C512, C512).value(), 0.1);
  EXPECT_NEAR(chunkPassage(in<Time>(1.3), Dt, in<Tokens>(4100), C512).value(),
              1.3 - (9 - 4100.0 / 512) * 42.95e-3, 1e-15);
  // eval/serving-modes.mls `loaded_chunked_pp2`: a prompt's chunks take L =
  // 9.080 ms of iterations through 2 stages, E = 4.890 ms more than the
  // decode steps they ride on, other prompts at 37.5 req/s. Each engine an
  // M/G/1 queue at 18.75 req/s: rho_e = 0.17025, and the slow cycles cover
  // C = 1 - 0.82975^2 = 0.311515 of the time: a prompt's stall C E / (r L)
  // = 0.311515 / 0.3405 x 4.890 ms = 4.4737 ms, f = 0.1678.
  const Time E = in<Time>(4.890e-3), L = in<Time>(9.080e-3);
  const Number Two = in<Number>(2);
  const RequestRate R = in<RequestRate>(37.5);
  EXPECT_NEAR(chunkConvoyStall(R, E, L, Two).value(), 4.4737e-3, 1e-7);
  // One stage, or no other prompt: its extra time whole.
  EXPECT_EQ(chunkConvoyStall(R, E, L, in<Number>(1)).value(), E.value());
  EXPECT_EQ(chunkConvoyStall(in<RequestRate>(0), E, L, Two).value(), E.value());
  EXPECT_NEAR(chunkConvoyStall(in<RequestRate>(1e-6), E, L, Two).value(),
              E.value(), 1e-10);
  // The share stalled rises with the rate towards E / L, and is all of it
  // once every engine always passes a prompt (r L >= m).
  double Last = 0;
  for (double Rate : {10.0, 50.0, 100.0, 200.0}) {
    const double F =
        Rate * chunkConvoyStall(in<RequestRate>(Rate), E, L, Two).value();
    EXPECT_GT(F, Last) << Rate;
    EXPECT_LT(F, 4.890 / 9.080) << Rate;
    Last = F;
  }
  EXPECT_DOUBLE_EQ(
      300 * chunkConvoyStall(in<RequestRate>(300), E, L, Two).value(),
      4.890 / 9.080);
  EXPECT_TRUE(
      std::isnan(chunkConvoyStall(R, in<Time>(std::nan("")), L, Two).value()));

  // eval/parallel-layouts.mls `s_pp8b64c`: 8 stages, L = 184.3 ms, E =
  // 98.42 ms, 64 slots of 100-token outputs at a 42.95 ms step: r x 99 x
  // 42.95 / 64 ms + (1 - (1 - r L / 8)^8) x 98.42 / 184.3 = 1 at r =
  // 8.439338 req/s (rho_e = 0.19442, 0.56070 + 0.43930; bisection in
  // Python): 843.934 tok/s.
  const Tokens Output = in<Tokens>(100);
  const Time Step = in<Time>(42.95e-3), E8 = in<Time>(98.42e-3),
             L8 = in<Time>(184.3e-3);
  const Number Slots = in<Number>(64), Eight = in<Number>(8);
  EXPECT_NEAR(
      pipelinedChunkedCapacity(Output, E8, L8, Step, Slots, Eight).value(),
      843.934, 1e-3);
  // One stage: continuous_capacity with the extra time, bit for bit.
  EXPECT_EQ(pipelinedChunkedCapacity(Output, E8, L8, Step, Slots, in<Number>(1))
                .value(),
            continuousCapacity(Output, E8, Step, Slots).value());
  // A single-token output: the engines' passages bound it, 8 / 184.3 ms.
  EXPECT_NEAR(
      pipelinedChunkedCapacity(in<Tokens>(1), E8, L8, Step, Slots, Eight)
          .value(),
      8 / 0.1843, 1e-9);
}

TEST(ServingWall, PipelinedCapacityCountsTheConvoys) {
  using namespace mlsc::q;
  using namespace mlsc::walls;
  // Two stages, a prompt holding each for T_share = 100 ms, a 50 ms decode
  // step: the convoy T_stall = max(2 x 100 - 50, 100) = 150 ms. Outputs of
  // n = 11 tokens on B = 10 slots: a request's decodes take (n - 1) x 50
  // ms / 10 = 50 ms of the replica. One stage's share a prompt would give
  // X = 11 / (100 + 50) ms = 73.33 tok/s. At r = 5.604972 req/s: rho = a =
  // 0.5604972, x = 0.5682605 (x e^(-a - rho / x) + a x = 0.12098 + 0.31851
  // = 0.43950 = 1 - rho), f = rho + a x - r x (200 - 150) ms = 0.87901 -
  // 0.15926 = 0.71975, and r x 50 ms = 0.28025: they add up to 1, so X =
  // 11 x 5.604972 = 61.65469 tok/s (bisection to 1e-12 in Python).
  const Tokens Output = in<Tokens>(11);
  const Time Share = in<Time>(0.1), Step = in<Time>(0.05);
  const Number Slots = in<Number>(10), Two = in<Number>(2);
  const Time Stall = pipelinePrefillStall(Share, Two, Step);
  EXPECT_DOUBLE_EQ(Stall.value(), 0.15);
  EXPECT_NEAR(pipelinedCapacity(Output, Share, Stall, Step, Slots, Two).value(),
              61.65469, 1e-4);
  // At the root the convoys' stall and the decodes fill the time.
  const RequestRate R =
      pipelinedCapacity(Output, Share, Stall, Step, Slots, Two) / Output *
      in<Requests>(1.0);
  const double F = (mergedConvoyRate(R, Share, Two) *
                    mergedConvoyStall(R, Stall, Share, Two) / in<Requests>(1.0))
                       .value();
  EXPECT_NEAR(F + (R * Share / in<Requests>(1.0)).value() / 2, 1.0, 1e-9);
  // One stage: continuous_capacity with the stage's share, bit for bit.
  const Number One = in<Number>(1);
  EXPECT_EQ(pipelinedCapacity(Output, Share, Share, Step, Slots, One).value(),
            continuousCapacity(Output, Share, Step, Slots).value());
  // The same 200 ms prefill over more stages: more than one stage's 11 /
  // (200 + 50) ms = 44 tok/s, rising with the depth (61.65, 69.48, 73.88
  // tok/s at 2, 4, 8), but ever further below what a stage's share a
  // prompt says (73.33, 110, 146.7 tok/s): the convoys' length stays the
  // prefill's.
  double Last = 44, LastRatio = 1;
  for (double M : {2.0, 4.0, 8.0}) {
    const Number Stages = in<Number>(M);
    const Time Each = in<Time>(0.2 / M);
    const double X = pipelinedCapacity(Output, Each,
                                       pipelinePrefillStall(Each, Stages, Step),
                                       Step, Slots, Stages)
                         .value();
    const double Ratio =
        X / continuousCapacity(Output, Each, Step, Slots).value();
    EXPECT_GT(X, Last) << M;
    EXPECT_LT(Ratio, LastRatio) << M;
    Last = X;
    LastRatio = Ratio;
  }
  EXPECT_NEAR(Last, 73.88, 0.01);
  // A single-token output: the convoys alone fill the time (r T_stall = 1
  // for isolated convoys would give 1 / 150 ms).
  const double Lone =
      pipelinedCapacity(in<Tokens>(1), Share, Stall, Step, Slots, Two).value();
  EXPECT_GT(Lone, 1 / 0.15);
  EXPECT_LT(Lone, 1 / 0.1);
  EXPECT_TRUE(std::isnan(
      pipelinedCapacity(Output, Share, in<Time>(std::nan("")), Step, Slots, Two)
          .value()));
}

TEST(ServingWall, PrefillInterferenceStretchesTheMeanGap) {
  using namespace mlsc::q;
  using namespace mlsc::walls;
  // 3.875 prefills/s of 69.44 ms take 26.91% of the replica's time; decode
  // runs in the rest: 8.686 ms / 0.7309 = 11.88 ms per token on average.
  Number F = prefillInterference(in<RequestRate>(3.875), in<Time>(69.44e-3));
  EXPECT_DOUBLE_EQ(F.value(), 3.875 * 69.44e-3);
  EXPECT_DOUBLE_EQ(interferedTokenTime(in<Time>(8.686e-3), F).value(),
                   8.686e-3 / (1 - 3.875 * 69.44e-3));
  // Prefills alone filling the replica leave no time to decode.
  EXPECT_TRUE(std::isinf(
      interferedTokenTime(in<Time>(8.686e-3), in<Number>(1)).value()));
}

} // namespace

namespace {

TEST(ServingWall, BatchedPrefillShareByHand) {
  // A 500-token prompt, memory-bound alone: 2 ms of weights, 0.5 ms of
  // FLOPs, 0.3 ms added (communication, fixed cost): 2.3 ms alone. A
  // budget of 2,048 tokens batches k = 4 prompts, which read the weights
  // once: max(0.5, 2 / 4) + 0.3 = 0.8 ms a prompt.
  using namespace mlsc::q;
  auto ms = [](double V) { return in<Time>(V * 1e-3); };
  EXPECT_NEAR(mlsc::walls::batchedPrefillShare(
                  ms(0.5), ms(2), ms(2.3), in<Tokens>(2048), in<Tokens>(500))
                  .value(),
              0.8e-3, 1e-15);
  // A prompt longer than the budget runs alone: its own 2.3 ms.
  EXPECT_NEAR(mlsc::walls::batchedPrefillShare(ms(0.5), ms(2), ms(2.3),
                                               in<Tokens>(256), in<Tokens>(500))
                  .value(),
              2.3e-3, 1e-15);
  // Compute-bound prompts gain nothing: max(3, 1 / 8) + 0 = 3 ms.
  EXPECT_NEAR(mlsc::walls::batchedPrefillShare(
                  ms(3), ms(1), ms(3), in<Tokens>(8192), in<Tokens>(1000))
                  .value(),
              3e-3, 1e-15);
}

} // namespace

namespace {

TEST(ServingWall, PackedChunkPromptsByHand) {
  // 1,024-token prompts in a 4,096-token budget: at most 4 share an
  // iteration. Prefills busy the replica rho = r x T: 10/s x 50 ms = 0.5
  // leaves 1 / (1 - 0.5) = 2 waiting; 18/s x 50 ms = 0.9 leaves 10, capped
  // at 4, as is a saturated queue; a prompt longer than the budget packs
  // with none.
  using namespace mlsc::q;
  auto k = [](double Rate, double Chunk) {
    return mlsc::walls::packedChunkPrompts(in<RequestRate>(Rate),
                                           in<Time>(0.05), in<Tokens>(Chunk),
                                           in<Tokens>(1024))
        .value();
  };
  EXPECT_DOUBLE_EQ(k(10, 4096), 2);
  EXPECT_DOUBLE_EQ(k(18, 4096), 4);
  EXPECT_DOUBLE_EQ(k(40, 4096), 4);
  EXPECT_DOUBLE_EQ(k(10, 512), 1);
}

} // namespace
