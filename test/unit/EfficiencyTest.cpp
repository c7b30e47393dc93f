//===- EfficiencyTest.cpp - Known answers: wall 3, MoE, MLA, training
//------===//
//
// Kernel-class efficiencies (wall 3), and the memory formulas that came with
// them: multi-head latent attention's KV cache, the expert weights an MoE
// step reads, inference and training activations, training state. Each
// expected value is a hand calculation written out here.
//
//===----------------------------------------------------------------------===//

#include "runtime/Defaults.h"
#include "runtime/walls/Formulas.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlsc;
using namespace mlsc::q;
using namespace mlsc::walls;

namespace {

const Number One = in<Number>(1);
const Bytes Bf16 = in<Bytes>(2);

TEST(EfficiencyWall, BlendedEfficiencySumsTheClassesTimes) {
  // 9 TFLOP of GEMMs at 0.9 take 10 T-equivalents; 1 TFLOP of attention at
  // 0.5 takes 2: eta = 10 / 12 = 0.8333...
  Flops Total = in<Flops>(10e12), Attention = in<Flops>(1e12);
  EXPECT_DOUBLE_EQ(
      blendedEfficiency(Total, Attention, in<Number>(0.9), in<Number>(0.5))
          .value(),
      10.0 / 12.0);
  // Equal classes give that class's efficiency; no attention gives eta_gemm.
  EXPECT_NEAR(
      blendedEfficiency(Total, Attention, in<Number>(0.7), in<Number>(0.7))
          .value(),
      0.7, 1e-15);
  EXPECT_DOUBLE_EQ(
      blendedEfficiency(Total, in<Flops>(0), in<Number>(0.8), in<Number>(0.1))
          .value(),
      0.8);
  // A step with no FLOPs does not divide by zero.
  EXPECT_DOUBLE_EQ(blendedEfficiency(in<Flops>(0), in<Flops>(0),
                                     in<Number>(0.8), in<Number>(0.1))
                       .value(),
                   0.8);
}

TEST(EfficiencyWall, KernelClassesEachWaitForTheirOwnSlowerResource) {
  // Llama-2-7B decode at batch 768, context 192, FP8 weights and KV cache on
  // an H100 SXM (1,979 TFLOP/s, 3.35 TB/s at 0.8):
  //   GEMMs:     2 x 6.738e9 x 768 = 10.35 TFLOP at 0.71 -> 7.366 ms,
  //              6.738 GB of weights -> 2.514 ms: compute-bound, 7.366 ms;
  //   attention: 2 x 32 x 768 x 192 x 4096 = 38.65 GFLOP at 0.2749 ->
  //              71.05 us, 768 x 192 x 262,144 B = 38.65 GB of KV ->
  //              14.42 ms: memory-bound, 14.42 ms.
  // In sequence 21.79 ms, where one roofline over the whole step gives
  // max(7.437, 16.94) = 16.94 ms.
  FlopRate Peak = in<FlopRate>(1979e12);
  Bandwidth BW = in<Bandwidth>(3.35e12);
  Number Mem = in<Number>(0.8);
  Time Gemm = computeTime(in<Flops>(2 * 6.738e9 * 768), Peak, in<Number>(0.71));
  Time Weights = memoryTime(in<Bytes>(6.738e9), BW, Mem);
  Time Attention = computeTime(in<Flops>(2.0 * 32 * 768 * 192 * 4096), Peak,
                               in<Number>(0.2749));
  Time KV = memoryTime(in<Bytes>(768.0 * 192 * 262144), BW, Mem);
  EXPECT_NEAR(Gemm.value(), 7.366e-3, 0.001e-3);
  EXPECT_NEAR(Weights.value(), 2.514e-3, 0.001e-3);
  EXPECT_NEAR(Attention.value(), 71.05e-6, 0.01e-6);
  EXPECT_NEAR(KV.value(), 14.42e-3, 0.005e-3);
  EXPECT_NEAR(
      kernelClassRooflineTime(Gemm, Weights, Attention, KV, in<Number>(1))
          .value(),
      21.79e-3, 0.005e-3);
  EXPECT_DOUBLE_EQ(
      kernelClassRooflineTime(Gemm, Weights, Attention, KV, in<Number>(1))
          .value(),
      Gemm.value() + KV.value());
  // Both classes memory-bound (batch 1): the one roofline's memory time,
  // weights and KV read in one pass.
  Time Gemm1 = Gemm / 768.0, Attention1 = Attention / 768.0, KV1 = KV / 768.0;
  EXPECT_DOUBLE_EQ(
      kernelClassRooflineTime(Gemm1, Weights, Attention1, KV1, in<Number>(1))
          .value(),
      Weights.value() + KV1.value());
  // Both compute-bound: the compute time at the blended efficiency.
  EXPECT_DOUBLE_EQ(kernelClassRooflineTime(Gemm, Weights / 10.0, Attention,
                                           Attention / 2.0, in<Number>(1))
                       .value(),
                   Gemm.value() + Attention.value());
}

TEST(EfficiencyWall, GemmOverlapRunsFromTheRooflineToTheSum) {
  // GEMMs 3 ms of arithmetic and 5 ms of weight reads, attention 0.5 ms of
  // arithmetic and 1 ms of KV reads. Full overlap (1) is the roofline's
  // max: 5 + 1 = 6 ms; none (0) adds the GEMM class's two: 3 + 5 + 1 =
  // 9 ms; half: max(3 + 0.5 x 5, 5 + 0.5 x 3) + 1 = 6.5 + 1 = 7.5 ms.
  // Attention keeps the max whatever the overlap.
  auto ms = [](double V) { return in<Time>(V * 1e-3); };
  auto at = [&](double O) {
    return kernelClassRooflineTime(ms(3), ms(5), ms(0.5), ms(1), in<Number>(O))
               .value() *
           1e3;
  };
  EXPECT_NEAR(at(1), 6.0, 1e-12);
  EXPECT_NEAR(at(0), 9.0, 1e-12);
  EXPECT_NEAR(at(0.5), 7.5, 1e-12);
  // Compute-bound GEMMs the same way: 5 ms of arithmetic over 3 of reads.
  EXPECT_NEAR(
      kernelClassRooflineTime(ms(5), ms(3), ms(0.5), ms(1), in<Number>(0.5))
              .value() *
          1e3,
      5 + 1.5 + 1, 1e-12);
}

TEST(EfficiencyWall, AttentionFlopsAreTheAttentionTermsOfWall1) {
  // Decode: 4 x 80 layers x 1,000 tokens of context x 8,192 x 4 sequences
  // / tp 2 = 5.24288 GFLOP (QK^T and scores x V, 2 ctx d_attn each); the
  // whole step minus the weights' 2*N*B/tp.
  Number L = in<Number>(80), D = in<Number>(8192), B = in<Number>(4);
  Number TP = in<Number>(2), N = in<Number>(70e9);
  Tokens Ctx = in<Tokens>(1000);
  EXPECT_DOUBLE_EQ(decodeAttentionFlops(L, D, B, Ctx, TP).value(),
                   4.0 * 80 * 1000 * 8192 * 4 / 2);
  EXPECT_NEAR(decodeStepFlops(N, L, D, B, Ctx, TP).value() -
                  decodeAttentionFlops(L, D, B, Ctx, TP).value(),
              2.0 * 70e9 * 4 / 2, 1e3);
  // Prefill of 2,048 tokens: position i attends i keys, 4 i d_attn a
  // layer: 2 x 80 x 4 x 2,048 x 2,049 x 8,192 / tp 2.
  Tokens S = in<Tokens>(2048);
  EXPECT_DOUBLE_EQ(prefillAttentionFlops(L, D, B, S, TP).value(),
                   2.0 * 80 * 4 * 2048 * 2049 * 8192 / 2);
  // BERT-base at 128 tokens: 4 x 12 x 128^2 x 768 = 0.604 GFLOP.
  EXPECT_DOUBLE_EQ(
      encoderAttentionFlops(in<Number>(12), in<Number>(768), in<Tokens>(128))
          .value(),
      4.0 * 12 * 128 * 128 * 768);
}

TEST(MemoryWall, MlaKVCacheOfDeepSeekV3) {
  // DeepSeek-V3: 61 layers cache a 512-wide latent and a 64-wide rotary key
  // per token: 61 x 576 x 2 B = 70,272 B/token in bf16 (about 70 KB, against
  // 61 x 2 x 128 x 128 x 2 B = 4 MB for the same heads under plain MHA).
  EXPECT_DOUBLE_EQ(
      mlaKVBytesPerToken(in<Number>(61), in<Number>(512), in<Number>(64), Bf16)
          .value(),
      70272);
}

TEST(MemoryWall, MoeWeightsReadGrowWithTheTokensRouted) {
  // Mixtral 8x7B: 46.7e9 parameters, 12.9e9 active, 8 experts, top-2. One
  // expert over all layers is (46.7 - 12.9)e9 / 6 = 5.6333e9; the rest,
  // 46.7e9 - 8 x 5.6333e9 = 1.6333e9, is always read.
  Number N = in<Number>(46.7e9), A = in<Number>(12.9e9);
  Number E = in<Number>(8), K = in<Number>(2);
  // One token reads exactly the active parameters: 12.9e9 x 2 B.
  EXPECT_NEAR(
      moeWeightBytesRead(N, A, E, K, in<Tokens>(1), Bf16, One, One).value(),
      25.8e9, 1e3);
  // Four tokens touch 8 x (1 - 0.75^4) = 5.46875 experts on average.
  double PerExpert = 33.8e9 / 6, Always = 46.7e9 - 8 * PerExpert;
  EXPECT_NEAR(
      moeWeightBytesRead(N, A, E, K, in<Tokens>(4), Bf16, One, One).value(),
      (Always + 5.46875 * PerExpert) * 2, 1e3);
  // A prefill of thousands of tokens reads every expert: all 93.4 GB; TP 2
  // halves it.
  EXPECT_NEAR(
      moeWeightBytesRead(N, A, E, K, in<Tokens>(4096), Bf16, in<Number>(2), One)
          .value(),
      46.7e9, 1e3);
  // Expert parallelism 8: each device holds one expert and reads it when
  // a token routes there; a 4,096-token prefill touches it surely:
  // (1.6333e9 + 5.6333e9) x 2 B = 14.53 GB.
  EXPECT_NEAR(
      moeWeightBytesRead(N, A, E, K, in<Tokens>(4096), Bf16, One, in<Number>(8))
          .value(),
      (Always + PerExpert) * 2, 1e3);
  // Stored per device under ep 8: the same 14.53 GB; without ep, 93.4 GB.
  EXPECT_NEAR(
      moeWeightBytesPerDevice(N, A, E, K, Bf16, One, in<Number>(8)).value(),
      (Always + PerExpert) * 2, 1e3);
  EXPECT_NEAR(moeWeightBytesPerDevice(N, A, E, K, Bf16, One, One).value(),
              93.4e9, 1e3);
}

TEST(MemoryWall, InferenceActivationsAndUnfusedScores) {
  // 2,048 tokens of Llama-3-70B at TP 8: 2,048 x (2 x 8,192 + 2 x 28,672 /
  // 8) x 2 B = 96,468,992 B.
  EXPECT_DOUBLE_EQ(inferenceActivationBytes(in<Tokens>(2048), in<Number>(8192),
                                            in<Number>(28672), in<Number>(8),
                                            Bf16)
                       .value(),
                   2048.0 * (2 * 8192 + 2 * 28672 / 8) * 2);
  // Unfused attention of one 4,096-token sequence, 64 heads over TP 8:
  // 8 x 4,096^2 x 2 B = 268,435,456 B.
  EXPECT_DOUBLE_EQ(attentionScoreBytes(One, in<Number>(64), in<Tokens>(4096),
                                       in<Number>(8), Bf16)
                       .value(),
                   268435456.0);
}

TEST(MemoryWall, TrainingStateAndActivations) {
  // Mixed-precision Adam: 2 + 2 + 12 = 16 B per parameter (ZeRO, 3.1):
  // 7.5e9 parameters need 120 GB before any sharding.
  EXPECT_DOUBLE_EQ(
      trainingStateBytes(in<Number>(7.5e9), Bf16, in<Bytes>(12)).value(),
      120e9);
  // Traffic per step: 7.5e9 x (4 x 2 + 2 x 12) B = 240 GB.
  EXPECT_DOUBLE_EQ(
      trainingStepBytes(in<Number>(7.5e9), Bf16, in<Bytes>(12)).value(), 240e9);
  // Korthikanti et al., eq. 1, GPT-3 175B layer shapes (h 12,288, 96 heads,
  // s 2,048, micro-batch 1): 2,048 x 12,288 x (34 + 5 x 96 x 2,048 /
  // 12,288) = 2,048 x 12,288 x 114 B = 2.869 GB per layer.
  EXPECT_DOUBLE_EQ(transformerActivationBytes(One, in<Tokens>(2048), One,
                                              in<Number>(12288), in<Number>(96))
                       .value(),
                   2048.0 * 12288 * 114);
  // Training does three forward passes' worth of FLOPs.
  EXPECT_DOUBLE_EQ(trainingFlopsPerSample(in<Flops>(8.22e9)).value(), 24.66e9);
}

} // namespace

namespace {

TEST(ComputeWall, InverseRooflineByHand) {
  // 2.2625 GB in 1 ms at full efficiency: 2.2625 TB/s; at eta_mem 0.8,
  // 2.828 TB/s. 32.26 TFLOP in 40 ms at eta 1: 806.6 TFLOP/s.
  EXPECT_DOUBLE_EQ(
      requiredBandwidth(in<Bytes>(2.2625e9), in<Time>(1e-3), in<Number>(1))
          .value(),
      2.2625e12);
  EXPECT_DOUBLE_EQ(
      requiredBandwidth(in<Bytes>(2.2625e9), in<Time>(1e-3), in<Number>(0.8))
          .value(),
      2.2625e12 / 0.8);
  EXPECT_DOUBLE_EQ(
      requiredPeak(in<Flops>(32.26e12), in<Time>(40e-3), in<Number>(1)).value(),
      32.26e12 / 40e-3);
  // Round trip: the forward roofline at the synthesised bandwidth takes
  // exactly the target time.
  Bandwidth BW =
      requiredBandwidth(in<Bytes>(7e9), in<Time>(2e-3), in<Number>(0.9));
  EXPECT_NEAR(memoryTime(in<Bytes>(7e9), BW, in<Number>(0.9)).value(), 2e-3,
              1e-18);
}

} // namespace
