//===- TrainingTest.cpp - Known answers for a decoder's training step -----===//
//
// The formulas decoder training lowers (runtime/walls/Compute.def,
// Memory.def, Communication.def), each against a published figure or a
// hand calculation written out here.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <gtest/gtest.h>

using namespace mlsc;
using namespace mlsc::q;
using namespace mlsc::walls;

namespace {

Number N(double V) { return in<Number>(V); }

TEST(Training, LayerParamsByHand) {
  // GPT-3 175B (h = 12,288, MHA, f = 4h, plain): 4h^2 of attention and
  // 8h^2 of feed-forward, 12 h^2 = 1,811,939,328.
  EXPECT_DOUBLE_EQ(
      decoderLayerParams(N(12288), N(12288), N(12288), N(49152), N(2)).value(),
      1811939328.0);
  // Llama 3.1 8B (h 4,096, 32 heads and 8 KV heads of 128, f 14,336,
  // gated): 2 x 4096 x 4096 + 2 x 4096 x 1024 + 3 x 4096 x 14336 =
  // 33,554,432 + 8,388,608 + 176,160,768 = 218,103,808. Its 32 layers and
  // untied 128,256 x 4,096 embedding and output layer give 6,979,321,856 +
  // 1,050,673,152 = 8,029,995,008: the 8.030e9 of Meta's model card.
  Number Layer = decoderLayerParams(N(4096), N(4096), N(1024), N(14336), N(3));
  EXPECT_DOUBLE_EQ(Layer.value(), 218103808.0);
  EXPECT_NEAR((32.0 * Layer + N(2.0 * 128256 * 4096)).value(), 8.030e9, 1e6);
}

TEST(Training, DeepSeekV3ParametersByHand) {
  // DeepSeek-V3's MLA layer (h 7,168, 128 heads of 128 + 64 rotary, v 128,
  // q rank 1,536, kv rank 512): 7168 x 1536 + 1536 x 128 x 192 + 7168 x
  // 576 + 512 x 128 x 256 + 128 x 128 x 7168 = 11,010,048 + 37,748,736 +
  // 4,128,768 + 16,777,216 + 117,440,512 = 187,105,280.
  Number Attn = mlaAttentionParams(N(7168), N(128), N(128), N(64), N(128),
                                   N(1536), N(512));
  EXPECT_DOUBLE_EQ(Attn.value(), 187105280.0);
  // An expert (gated, 2,048 wide): 3 x 7168 x 2048 = 44,040,192; the 3
  // dense layers' FFN (18,432 wide) 396,361,728; 58 MoE layers of 256
  // routed and 1 shared expert. With the untied 129,280 x 7,168 tables:
  // 61 x 187,105,280 + 3 x 396,361,728 + 58 x 257 x 44,040,192 + 2 x
  // 129,280 x 7,168 = 671.0e9, the report's 671B; active (8 routed + 1
  // shared) 37.5e9, its 37B.
  double Expert = 3.0 * 7168 * 2048, Dense = 3.0 * 7168 * 18432;
  double Tables = 2.0 * 129280 * 7168;
  double Total = 61 * Attn.value() + 3 * Dense + 58 * 257 * Expert + Tables;
  EXPECT_NEAR(Total / 671e9, 1, 0.002);
  double Active = 61 * Attn.value() + 3 * Dense + 58 * 9 * Expert + Tables;
  EXPECT_NEAR(Active / 37e9, 1, 0.02);
  // moe_layer_average spreads the MoE layers' routed weights over all 61:
  // 58 x 8 x 44,040,192 / 61 = 335,004,083 a layer.
  EXPECT_NEAR(moeLayerAverage(N(61), N(3), N(0), N(8 * Expert)).value(),
              58.0 * 8 * Expert / 61, 1e-6);
}

TEST(Training, ModelFlopsAreMegatronsSeventyTwo) {
  // GPT-3 175B, s = 2,048, V = 51,200: 3 x (2 x 96 x 1,811,939,328 + 4 x
  // 96 x 2,048 x 12,288 + 2 x 12,288 x 51,200) = 1,076,442,955,776 FLOP a
  // token, which is Megatron's 72 l h^2 (1 + s/(6h) + V/(12 l h)) (Korthikanti
  // et al., section 6) for one token.
  FlopsPerToken F = trainingModelFlopsPerToken(
      N(96), N(1811939328.0), in<Tokens>(2048), N(12288), N(12288), N(51200));
  EXPECT_DOUBLE_EQ(F.value(), 1076442955776.0);
  double Megatron = 72.0 * 96 * 12288.0 * 12288 *
                    (1 + 2048.0 / (6 * 12288) + 51200.0 / (12 * 96 * 12288.0));
  EXPECT_NEAR(F.value() / Megatron, 1, 1e-12);
  // Recomputation adds the attention core (selective, 4 x 96 x 2,048 x
  // 12,288 = 9,663,676,416) or each layer's forward (full: + 2 x 96 x
  // 1,811,939,328 = 357,556,027,392).
  auto Re = [](double Kind) {
    return recomputeFlopsPerToken(N(96), N(1811939328.0), in<Tokens>(2048),
                                  N(12288), N(Kind))
        .value();
  };
  EXPECT_DOUBLE_EQ(Re(0), 0.0);
  EXPECT_DOUBLE_EQ(Re(1), 9663676416.0);
  EXPECT_DOUBLE_EQ(Re(2), 357556027392.0);
  // Full recomputation runs 4/3 of the layers' model FLOPs: Megatron's 96
  // against 72 for the layer terms.
}

TEST(Training, StageFlopsOfAMicroBatch) {
  // GPT-3 175B at tp 8 x pp 8, a micro-batch of one 2,048-token sequence:
  // the last stage's 12 layers, 2,048 x (6 x 12 x 1,811,939,328 + 6 x
  // 12,288 x 51,200) / 8 = 3.4364e13 FLOP of GEMMs (8 x ... with full
  // recomputation: 4.5497e13); attention 2,048 x 12 x 12 x 2,048 x 12,288 /
  // 2 / 8 = 4.6386e11 (16 x ... recomputed: 6.1848e11).
  auto Gemm = [](double Re) {
    return trainingStageGemmFlops(in<Tokens>(2048), N(12), N(1811939328.0),
                                  N(12288), N(51200), N(1), N(Re), N(8))
        .value();
  };
  EXPECT_DOUBLE_EQ(Gemm(0), 34364033335296.0);
  EXPECT_DOUBLE_EQ(Gemm(2), 45496588566528.0);
  // A middle stage has no output layer: 2,048 x 6 x 12 x 1,811,939,328 / 8
  // = 3.3397e13.
  EXPECT_DOUBLE_EQ(trainingStageGemmFlops(in<Tokens>(2048), N(12),
                                          N(1811939328.0), N(12288), N(51200),
                                          N(0), N(0), N(8))
                       .value(),
                   2048.0 * 6 * 12 * 1811939328.0 / 8);
  auto Attn = [](double Re) {
    return trainingStageAttentionFlops(in<Tokens>(2048), N(12),
                                       in<Tokens>(2048), N(12288), N(Re), N(1),
                                       N(8))
        .value();
  };
  EXPECT_DOUBLE_EQ(Attn(0), 463856467968.0);
  EXPECT_DOUBLE_EQ(Attn(1), 618475290624.0);
  // Unfused attention computes every score: twice the causal kernel's.
  EXPECT_DOUBLE_EQ(trainingStageAttentionFlops(in<Tokens>(2048), N(12),
                                               in<Tokens>(2048), N(12288), N(0),
                                               N(0), N(8))
                       .value(),
                   2 * 463856467968.0);
}

TEST(Training, PipelineStepAndUtilisation) {
  // 32 micro-batches of 100 ms through 8 stages: (32 + 7) x 0.1 = 3.9 s;
  // with 4 chunks a stage (32 + 7/4) x 0.1 = 3.375 s. The bubble is then
  // 7/128 of the ideal 3.2 s: 0.175 s.
  EXPECT_NEAR(pipelineStepTime(N(32), N(8), N(1), in<Time>(0.1)).value(), 3.9,
              1e-12);
  Time V4 = pipelineStepTime(N(32), N(8), N(4), in<Time>(0.1));
  EXPECT_NEAR(V4.value(), 3.375, 1e-12);
  EXPECT_NEAR(V4.value() - 3.2,
              3.2 * pipelineBubbleFraction(N(8), N(32), N(4)).value(), 1e-12);
  // 4e18 FLOP in 20 s on 1,024 A100s (312 TFLOP/s): 4e18 / (20 x 1,024 x
  // 312e12) = 0.62600 MFU.
  EXPECT_NEAR(flopUtilisation(in<Flops>(4e18), in<Time>(20), N(1024),
                              in<FlopRate>(312e12))
                  .value(),
              0.626002, 1e-6);
  // 1e12 tokens at a million a second: 1e6 s.
  EXPECT_DOUBLE_EQ(timeToTrain(in<Tokens>(1e12), in<TokenRate>(1e6)).value(),
                   1e6);
}

TEST(Training, KorthikantiActivationsPerLayer) {
  // GPT-3 175B, s = 2,048, b = 1, h = 12,288, a = 96, t = 8, 16-bit
  // (Korthikanti et al., Table 2): tensor parallelism alone, attention
  // unfused, sbh (10 + 24/t + 5as/(ht)) = 578,813,952 B; with sequence
  // parallelism and selective recomputation 34 sbh / t = 106,954,752 B; full
  // recomputation without sequence parallelism 2 sbh = 50,331,648 B.
  auto A = [](double SP, double Re, double Fused) {
    return trainingLayerActivationBytes(
               in<Tokens>(2048), N(1), N(12288), N(96), N(12288), N(12288),
               N(49152), N(2), in<Bytes>(2), N(8), N(SP), N(Re), N(Fused), N(1))
        .value();
  };
  EXPECT_DOUBLE_EQ(A(0, 0, 0), 578813952.0);
  EXPECT_DOUBLE_EQ(A(1, 1, 0), 106954752.0);
  EXPECT_DOUBLE_EQ(A(0, 2, 0), 50331648.0);
  // FlashAttention keeps no scores: with sequence parallelism and no
  // recomputation it equals the selective figure.
  EXPECT_DOUBLE_EQ(A(1, 0, 1), 106954752.0);
  // Megatron-LM's estimator (18 sbh + 4 sbf, over t) gives the same for f =
  // 4h: (18 + 16) x 2,048 x 12,288 / 8.
  EXPECT_DOUBLE_EQ(A(1, 1, 1), (18.0 + 16.0) * 2048 * 12288 / 8);
  // Without dropout, unfused attention keeps only the softmax output of its
  // scores, 2 a s^2 b / t instead of 5: (8 + 24/8) sbh + 2 x 96 x 2048^2 /
  // 8 = 276,824,064 + 100,663,296 B.
  EXPECT_DOUBLE_EQ(
      trainingLayerActivationBytes(in<Tokens>(2048), N(1), N(12288), N(96),
                                   N(12288), N(12288), N(49152), N(2),
                                   in<Bytes>(2), N(8), N(0), N(0), N(0), N(0))
          .value(),
      11.0 * 2048 * 12288 + 2.0 * 96 * 2048 * 2048 / 8);
  // Without dropout there are no masks: 2 bytes a hidden element fewer,
  // (34 - 2) sbh / t.
  EXPECT_DOUBLE_EQ(
      trainingLayerActivationBytes(in<Tokens>(2048), N(1), N(12288), N(96),
                                   N(12288), N(12288), N(49152), N(2),
                                   in<Bytes>(2), N(8), N(1), N(1), N(1), N(0))
          .value(),
      32.0 * 2048 * 12288 / 8);
}

TEST(Training, InFlightMicroBatchesAndOutputLayer) {
  // 1F1B holds min(m, p); interleaving adds 1 + (p - 1)/(p v) (Megatron-LM's
  // interleaved_schedule_memory_penalty): p 16, m 32, v 2: 16 x (1 + 15/32)
  // = 23.5. That is the schedule's warm-up at groups of N = p micro-batches
  // a chunk: 2 x 15 + 1 x 16 chunks, and the one in flight, 47 chunks of
  // half a stage's layers.
  EXPECT_DOUBLE_EQ(microBatchesInFlight(N(16), N(32), N(1), N(16)).value(),
                   16.0);
  EXPECT_DOUBLE_EQ(microBatchesInFlight(N(16), N(32), N(2), N(16)).value(),
                   23.5);
  EXPECT_DOUBLE_EQ(microBatchesInFlight(N(8), N(4), N(1), N(8)).value(), 4.0);
  // Groups of 32 (all of them): 2 x 15 + 32 + 1 = 63 chunks, 31.5
  // micro-batches; at v 4, groups of 16: (30 + 48 + 1) / 4 = 19.75, Megatron's
  // p (1 + (p - 1)/(p v)) = 16 x (1 + 15/64) as well.
  EXPECT_DOUBLE_EQ(microBatchesInFlight(N(16), N(32), N(2), N(32)).value(),
                   31.5);
  EXPECT_DOUBLE_EQ(microBatchesInFlight(N(16), N(32), N(4), N(16)).value(),
                   19.75);
  EXPECT_DOUBLE_EQ(16 * (1 + 15.0 / 64), 19.75);
  // Never more than the step's micro-batches: p 4, m 4, v 4, N 4: (6 + 12 +
  // 1) / 4 = 4.75 chunks' worth, capped at the 4 micro-batches.
  EXPECT_DOUBLE_EQ(microBatchesInFlight(N(4), N(4), N(4), N(4)).value(), 4.0);
  // Llama 3 405B's last stage, s 8,192, h 16,384, V 128,256, tp 8: 4 x
  // 8,192 x 16,384 x (1 + 128,256/16,384) / 8 = 4 x 8,192 x 144,640 / 8 =
  // 592,445,440 B.
  EXPECT_DOUBLE_EQ(outputLayerActivationBytes(in<Tokens>(8192), N(1), N(16384),
                                              N(128256), N(8))
                       .value(),
                   592445440.0);
}

TEST(Training, StateShardsAndStageParams) {
  // GPT-3 175B at tp 8 x pp 8, the first stage (12 layers and the
  // embedding): (12 x 1,811,939,328 + 51,200 x 12,288) / 8 =
  // (21,743,271,936 + 629,145,600) / 8 = 2,796,552,192 parameters a device.
  Number P = trainingStageParams(N(12), N(1811939328.0), N(12288), N(51200),
                                 N(1), N(8));
  EXPECT_DOUBLE_EQ(P.value(), 2796552192.0);
  // One stage, untied: the embedding and the output layer both.
  EXPECT_DOUBLE_EQ(
      trainingStageParams(N(32), N(218103808.0), N(4096), N(128256), N(2), N(1))
          .value(),
      8029995008.0);
  // ZeRO: 12 B of optimizer state a parameter over dp 64 from stage 1; the
  // 4 B gradients stay whole until stage 2.
  EXPECT_DOUBLE_EQ(
      zeroShardedBytes(N(1e9), in<Bytes>(12), N(64), N(1), N(1)).value(),
      12e9 / 64);
  EXPECT_DOUBLE_EQ(
      zeroShardedBytes(N(1e9), in<Bytes>(4), N(64), N(1), N(2)).value(), 4e9);
  // Adam's step moves g + 2 opt + w = 4 + 24 + 2 = 30 B a parameter.
  EXPECT_DOUBLE_EQ(
      optimizerStepBytes(N(1e9), in<Bytes>(2), in<Bytes>(4), in<Bytes>(12))
          .value(),
      30e9);
}

TEST(Training, UnfusedScoreTrafficByHand) {
  // GPT-3 175B's 96 heads over tp 8, one 2,048-token sequence, 12 layers a
  // stage, 16-bit, with dropout: 3 x (8 + 5) = 39 B a score, x 12 heads x
  // 2,048^2 x 12 layers = 23.55 GB; without dropout 24 B a score.
  EXPECT_DOUBLE_EQ(unfusedScoreBytes(N(1), in<Tokens>(2048), N(96), N(12),
                                     in<Bytes>(2), N(1), N(8))
                       .value(),
                   39.0 * 12 * 2048 * 2048 * 12);
  EXPECT_DOUBLE_EQ(unfusedScoreBytes(N(1), in<Tokens>(2048), N(96), N(12),
                                     in<Bytes>(2), N(0), N(8))
                       .value(),
                   24.0 * 12 * 2048 * 2048 * 12);
}

TEST(Training, CrossEntropyTrafficByHand) {
  // Llama 3's 128,256 vocabulary, a micro-batch of 8,192 tokens, tp 8:
  // Megatron-LM's unfused passes over 8,192 x 16,032 logits, forward the
  // cast to fp32 (2 + 4 B), max (4), subtract (8), exp (8), sum (4) and
  // normalise (8), backward the scale (8) and the cast back (4 + 2): 52 x
  // 131,334,144 B = 6.829 GB.
  EXPECT_DOUBLE_EQ(crossEntropyBytes(in<Tokens>(8192), N(128256), N(8)).value(),
                   52.0 * 8192 * 128256 / 8);
  EXPECT_NEAR(crossEntropyBytes(in<Tokens>(8192), N(128256), N(8)).value(),
              6.829e9, 0.001e9);
}

TEST(Training, Fp8CastTrafficByHand) {
  // Llama 3 8B's layer in FP8 on one GPU (h 4,096, d_attn 4,096, d_kv
  // 1,024, gated f 14,336): forward 2 x 4096 + 4096 + 14336 = 26,624
  // elements, backward 2 x 4096 + 4096 + 2048 + 3 x 14336 = 57,344; 3 B
  // each: 251,904 B a token.
  EXPECT_DOUBLE_EQ(fp8CastBytesPerToken(N(4096), N(4096), N(1024), N(14336),
                                        N(3), N(1), N(0))
                       .value(),
                   251904.0);
  // tp 8 with sequence parallelism splits all of it: 31,488 B.
  EXPECT_DOUBLE_EQ(fp8CastBytesPerToken(N(4096), N(4096), N(1024), N(14336),
                                        N(3), N(8), N(1))
                       .value(),
                   31488.0);
}

TEST(Training, ElementwiseTrafficByHand) {
  // Llama 3 8B's layer (h 4,096, gated f 14,336, 16-bit, tp 1): forward 10h
  // + 3f = 83,968 elements, three passes: 6 x 83,968 = 503,808 B a token.
  EXPECT_DOUBLE_EQ(elementwiseBytesPerToken(N(4096), N(14336), N(2),
                                            in<Bytes>(2), N(1), N(0), N(3))
                       .value(),
                   503808.0);
  // tp 8 without sequence parallelism splits only the f-wide part: 6 x
  // (40,960 + 43,008 / 8) = 278,016 B; with it, everything: 62,976 B.
  EXPECT_DOUBLE_EQ(elementwiseBytesPerToken(N(4096), N(14336), N(2),
                                            in<Bytes>(2), N(8), N(0), N(3))
                       .value(),
                   278016.0);
  EXPECT_DOUBLE_EQ(elementwiseBytesPerToken(N(4096), N(14336), N(2),
                                            in<Bytes>(2), N(8), N(1), N(3))
                       .value(),
                   62976.0);
}

TEST(Training, DataParallelSyncByZeroStage) {
  // 1e9 parameters over 8 ranks of one node (450 GB/s, no latency, eta 1):
  // ZeRO 0 all-reduces 4 GB of gradients, 2 x 7/8 x 4e9 / 450e9 = 15.556
  // ms; ZeRO 1 reduce-scatters them (7.778 ms) and all-gathers 2 GB of
  // weights (3.889 ms): 11.667 ms; ZeRO 3 gathers the weights twice, before
  // the forward and the backward pass: 7.778 + 2 x 3.889 = 15.556 ms, 1.5x
  // the traffic of a plain all-reduce of 16-bit gradients (ZeRO, section
  // 7).
  auto Sync = [](double Stage) {
    return dataParallelSyncTime(N(1e9), in<Bytes>(4), in<Bytes>(2), N(Stage),
                                N(8), N(8), N(1), in<Bandwidth>(450e9),
                                in<Time>(0), in<Bandwidth>(50e9), in<Time>(0),
                                N(1), in<Time>(0), N(1))
        .value();
  };
  EXPECT_NEAR(Sync(0), 2 * 7.0 / 8 * 4e9 / 450e9, 1e-15);
  EXPECT_NEAR(Sync(1), 7.0 / 8 * 4e9 / 450e9 + 7.0 / 8 * 2e9 / 450e9, 1e-15);
  EXPECT_NEAR(Sync(3), 7.0 / 8 * 4e9 / 450e9 + 2 * 7.0 / 8 * 2e9 / 450e9,
              1e-15);
  EXPECT_NEAR(Sync(0) * 1e3, 15.556, 1e-3);
  // Tiers (wall 10): 64 ranks, 8 to a node, 8 nodes in 2 pods of 4, 1 GB
  // of gradients, 450 GB/s NVLink, 50 GB/s NICs, 4:1 above the pods, no
  // latency, eta 1. Reduce-scatter in the node 7/8 x 1e9 / 450e9 = 1.944
  // ms; across the pod's 4 nodes 3/4 x 125 MB / 50 GB/s = 1.875 ms; the
  // 31.25 MB shard all-reduced across 2 pods at 12.5 GB/s: 2 x 1/2 x
  // 31.25e6 / 12.5e9 = 2.5 ms; then the all-gathers, 1.875 + 1.944 ms:
  // 10.14 ms in all. One pod: 2 x 1.944 + 2 x 7/8 x 125e6 / 50e9 = 8.264
  // ms, cheaper, as the shard crossing the tier is small.
  auto Tiered = [](double Pods) {
    return tieredAllReduceTime(in<Bytes>(1e9), N(64), N(8), N(Pods),
                               in<Bandwidth>(450e9), in<Time>(0),
                               in<Bandwidth>(50e9), in<Time>(0), N(4),
                               in<Time>(0), N(1))
        .value();
  };
  double RsNode = 7.0 / 8 * 1e9 / 450e9, RsPod = 3.0 / 4 * 125e6 / 50e9;
  EXPECT_NEAR(Tiered(2), 2 * RsNode + 2 * RsPod + 31.25e6 / 12.5e9, 1e-12);
  EXPECT_NEAR(Tiered(2) * 1e3, 10.139, 1e-3);
  EXPECT_NEAR(Tiered(1), 2 * RsNode + 2 * 7.0 / 8 * 125e6 / 50e9, 1e-12);
  EXPECT_NEAR(Tiered(1) * 1e3, 8.264, 1e-3);
  // One rank syncs nothing.
  EXPECT_EQ(dataParallelSyncTime(N(1e9), in<Bytes>(4), in<Bytes>(2), N(0), N(1),
                                 N(8), N(1), in<Bandwidth>(450e9), in<Time>(0),
                                 in<Bandwidth>(50e9), in<Time>(0), N(1),
                                 in<Time>(0), N(1))
                .value(),
            0.0);
}

TEST(Training, SendsAndRingAttentionPickTheirLinks) {
  // GPT-3's activation, 2,048 x 12,288 x 2 B / tp 8 = 6,291,456 B, sent
  // forward and back by a stage of 2 chunks whose neighbour is 64 ranks
  // away (off the 8-GPU node): 2 x 2 x (1 us + 6,291,456 / 50e9) = 507.3
  // us; 4 ranks away it stays on NVLink: 4 x (1 us + 6,291,456 / 450e9).
  auto Send = [](double Stride) {
    return pipelineStageSendTime(in<Bytes>(6291456), N(2), N(Stride), N(8),
                                 in<Bandwidth>(450e9), in<Time>(1e-6),
                                 in<Bandwidth>(50e9), in<Time>(1e-6), N(1))
        .value();
  };
  EXPECT_NEAR(Send(64), 4 * (1e-6 + 6291456 / 50e9), 1e-15);
  EXPECT_NEAR(Send(64) * 1e6, 507.32, 0.01);
  EXPECT_NEAR(Send(4), 4 * (1e-6 + 6291456 / 450e9), 1e-15);
  // Ring attention over cp 4 with tp 8 (32 ranks, off the node): 3 x 3 x
  // (1 us + M / 50e9); cp 1 exchanges nothing.
  EXPECT_NEAR(contextParallelRingTime(in<Bytes>(1e6), N(4), N(32), N(8),
                                      in<Bandwidth>(450e9), in<Time>(1e-6),
                                      in<Bandwidth>(50e9), in<Time>(1e-6), N(1))
                  .value(),
              9 * (1e-6 + 1e6 / 50e9), 1e-15);
  EXPECT_EQ(contextParallelRingTime(in<Bytes>(1e6), N(1), N(8), N(8),
                                    in<Bandwidth>(450e9), in<Time>(1e-6),
                                    in<Bandwidth>(50e9), in<Time>(1e-6), N(1))
                .value(),
            0.0);
}

} // namespace
