//===- WallsTest.cpp - Known answers for walls 1 and 2 --------------------===//
//
// Each expected value is a published figure or a hand calculation written
// out in the test.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlsc;
using namespace mlsc::q;
using namespace mlsc::walls;

namespace {

const Number One = in<Number>(1);

TEST(MemoryWall, Llama70BDecodeWeightReadOnTwoH100s) {
  // 70.6e9 params x 2 B / TP 2 / 3.35 TB/s = 21.07 ms per token per GPU.
  Bytes W = weightBytesPerDevice(in<Number>(70.6e9), in<Bytes>(2),
                                 in<Number>(2), One);
  EXPECT_DOUBLE_EQ(W.value(), 70.6e9);
  Time T = memoryTime(W, in<Bandwidth>(3.35e12), One);
  EXPECT_NEAR(T.value() * 1e3, 21.07, 0.005);
}

TEST(MemoryWall, Llama70BKVCacheIs320KiBPerToken) {
  // 2 x 80 layers x 8 KV heads x 128 head dim x 2 B = 327,680 B = 320 KiB.
  BytesPerToken KV = kvBytesPerToken(in<Number>(80), in<Number>(8),
                                     in<Number>(128), in<Bytes>(2));
  EXPECT_DOUBLE_EQ(KV.value(), 320 * 1024.0);
}

TEST(ComputeWall, RidgePointOfH100) {
  // 989 TFLOP/s / 3.35 TB/s = 295.2 FLOP/B.
  Intensity R = ridgePoint(in<FlopRate>(989e12), in<Bandwidth>(3.35e12));
  EXPECT_NEAR(R.value(), 295.22, 0.01);
}

TEST(ComputeWall, DecodeFlopsByHand) {
  // 2 x 1e9 params x 3 sequences + 4 x 2 layers x 3 x 100 ctx x 64 d_attn
  // (QK^T and scores x V, 2 ctx d_attn each), split over TP 2.
  Flops F = decodeStepFlops(in<Number>(1e9), in<Number>(2), in<Number>(64),
                            in<Number>(3), in<Tokens>(100), in<Number>(2));
  EXPECT_DOUBLE_EQ(F.value(), (2 * 1e9 * 3 + 4 * 2 * 3 * 100 * 64.0) / 2);
}

TEST(ComputeWall, PrefillFlopsByHand) {
  // Weights: 2 x 1e9 x 1 sequence x 3 tokens = 6e9. Causal attention over
  // positions 1..3: 4 x L x (1 + 2 + 3) x d = 4 x 2 x 6 x 4 = 192.
  Flops F = prefillFlops(in<Number>(1e9), in<Number>(2), in<Number>(4), One,
                         in<Tokens>(3), One);
  EXPECT_DOUBLE_EQ(F.value(), 6e9 + 192);
}

TEST(ComputeWall, MlaAttentionFollowsTheLatentDimensions) {
  // Issue 12, item 12: DeepSeek-V3's multi-head latent attention, 128
  // heads, qk_nope 128, rope 64, v_head_dim 128, kv_rank 512
  // (deepseek_v3_config). Decode absorbs the up-projections: each head
  // scores 512 + 64 dimensions of latent and rope key and reads 512 of
  // values, a mean width of 544: 128 x 544 = 69,632, against the 128 x 128
  // = 16,384 that heads x head_dim gave (4.25 times too few attention
  // FLOPs). Prefill runs unabsorbed: (128 + 64 + 128) / 2 = 160 a head,
  // 20,480.
  Number H = in<Number>(128);
  EXPECT_DOUBLE_EQ(
      mlaDecodeAttentionDim(H, in<Number>(512), in<Number>(64)).value(),
      69632.0);
  EXPECT_DOUBLE_EQ(mlaPrefillAttentionDim(H, in<Number>(128), in<Number>(64),
                                          in<Number>(128))
                       .value(),
                   20480.0);
  // A decode step of one sequence at a 4,096-token context over 61 layers:
  // 4 x 61 x 4,096 x 69,632 = 69.59 GFLOP of attention, next to 2 x 37e9 =
  // 74 GFLOP for the active weights.
  Flops F = decodeStepFlops(in<Number>(37e9), in<Number>(61), in<Number>(69632),
                            One, in<Tokens>(4096), One);
  EXPECT_NEAR(F.value() - 74e9, 4 * 61 * 4096 * 69632.0, 1);
  EXPECT_NEAR((F.value() - 74e9) / 1e9, 69.59, 0.005);
}

TEST(ComputeWall, BatchOneDecodeIsMemoryBoundPrefillIsComputeBound) {
  // Llama-3-70B, BF16, TP 2, batch 1 on H100: intensity ~1 FLOP/B at decode,
  // thousands of FLOP/B for a 2,048-token prefill, against a 295 ridge.
  Number P = in<Number>(70.6e9), L = in<Number>(80), D = in<Number>(8192),
         TP = in<Number>(2);
  Bytes W = weightBytesPerDevice(P, in<Bytes>(2), TP, One);
  BytesPerToken KV =
      kvBytesPerToken(L, in<Number>(8), in<Number>(128), in<Bytes>(2));
  Intensity Ridge = ridgePoint(in<FlopRate>(989e12), in<Bandwidth>(3.35e12));
  Intensity Decode =
      arithmeticIntensity(decodeStepFlops(P, L, D, One, in<Tokens>(2048), TP),
                          decodeStepBytes(W, KV, One, in<Tokens>(2048), TP));
  Intensity Prefill =
      arithmeticIntensity(prefillFlops(P, L, D, One, in<Tokens>(2048), TP),
                          prefillBytes(W, KV, One, in<Tokens>(2048), TP));
  EXPECT_LT(Decode, Ridge);
  EXPECT_GT(Prefill, Ridge);
  EXPECT_NEAR(Decode.value(), 1.0, 0.05);
}

TEST(Formulas, DoubleAdapterMatchesTypedCallBitForBit) {
  double In[] = {1e9, 2, 64, 3, 100, 2};
  double ViaGraph = formula(FormulaId::DecodeStepFlops).Eval(In);
  double Typed = decodeStepFlops(in<Number>(1e9), in<Number>(2), in<Number>(64),
                                 in<Number>(3), in<Tokens>(100), in<Number>(2))
                     .value();
  EXPECT_EQ(ViaGraph, Typed);
}

TEST(Formulas, SignaturesGiveDimensions) {
  EXPECT_EQ(formula(FormulaId::MemoryTime).Result.str(), "s");
  ASSERT_EQ(formula(FormulaId::MemoryTime).Params.size(), 3u);
  EXPECT_EQ(formula(FormulaId::MemoryTime).Params[0].str(), "B");
  EXPECT_EQ(formula(FormulaId::MemoryTime).Params[1].str(), "B/s");
  EXPECT_TRUE(formula(FormulaId::MemoryTime).Params[2].isDimensionless());
  EXPECT_EQ(formula(FormulaId::KVBytesPerToken).Result.str(), "B/tok");
  EXPECT_EQ(formula(FormulaId::RidgePoint).Result.str(), "FLOP/B");
  EXPECT_EQ(formula(FormulaId::DecodeThroughput).Result.str(), "tok/s");
  EXPECT_EQ(formula(FormulaId::ComputeTime).W, Wall::Compute);
  EXPECT_EQ(formula(FormulaId::MemoryTime).W, Wall::Memory);
}

} // namespace

namespace {

TEST(Energy, NameplatePowerAndEnergyPerToken) {
  // A DGX H100-like node: 8 x 700 W + 2.2 kW overhead = 7.8 kW; at
  // 5,229 tok/s that is 7,800 / 5,229 = 1.4917 J per token.
  using namespace mlsc::q;
  Power P = systemPower(in<Number>(8), in<Power>(700), in<Number>(1),
                        in<Power>(2200));
  EXPECT_DOUBLE_EQ(P.value(), 7800);
  EXPECT_NEAR(energyPerToken(P, in<TokenRate>(5229)).value(), 1.4917, 1e-4);
  EXPECT_EQ(formula(FormulaId::EnergyPerToken).Result.str(), "J/tok");
  EXPECT_EQ(formula(FormulaId::SystemPower).W, Wall::Sustainability);
}

TEST(Energy, Gpt3TrainingCarbonAsPattersonEtAl) {
  // Patterson et al. (arXiv 2104.10350): GPT-3's training took 1,287 MWh at
  // the meter (PUE 1.1 included) on a grid of 0.429 kgCO2e/kWh: 1,287,000
  // kWh x 0.429 kg/kWh = 552,123 kg = 552.1 tCO2e.
  using namespace mlsc::q;
  const double KWh = 3.6e6;
  Energy E = in<Energy>(1287e3 * KWh);
  Mass C = operationalCarbon(E, in<CarbonIntensity>(0.429 / KWh));
  EXPECT_NEAR(C.value(), 552123, 1);
  EXPECT_EQ(formula(FormulaId::OperationalCarbon).Result.str(), "kg");
  // The same run's IT energy at that PUE: 1,287 / 1.1 = 1,170 MWh; a
  // facility power is the IT power times the PUE.
  EXPECT_DOUBLE_EQ(facilityPower(in<Power>(1000), in<Number>(1.1)).value(),
                   1100);
  // Water at the commonly cited 1.8 L/kWh (The Green Grid's WUE, on IT
  // energy): 1,170,000 kWh x 1.8 L/kWh = 2,106,000 L = 2,106 m^3.
  Volume W =
      waterUse(in<Energy>(1170e3 * KWh), in<WaterIntensity>(1.8e-3 / KWh));
  EXPECT_NEAR(W.value(), 2106, 1e-9);
  EXPECT_EQ(formula(FormulaId::WaterUse).Result.str(), "m^3");
}

TEST(Fragility, FleetMtbfAndAnUninterruptedRun) {
  using namespace mlsc::q;
  const double H = 3600;
  // 64 devices at 80,600 h, 8 hosts at 125,000 h and 64 network
  // attachments at 145,000 h: 64 / 80,600 + 8 / 125,000 + 64 / 145,000 =
  // 7.9404e-4 + 6.4e-5 + 4.4138e-4 = 1.29942e-3 failures an hour, an MTBF
  // of 769.57 h.
  Time M =
      fleetMtbf(in<Number>(64), in<Time>(80600 * H), in<Number>(8),
                in<Time>(125000 * H), in<Number>(64), in<Time>(145000 * H));
  EXPECT_NEAR(M.value() / H, 1 / (64 / 80600. + 8 / 125000. + 64 / 145000.),
              1e-9);
  EXPECT_NEAR(M.value() / H, 769.57, 0.01);
  // A component counted zero times adds nothing (its MTTF may be 0).
  EXPECT_DOUBLE_EQ(fleetMtbf(in<Number>(1), in<Time>(1000), in<Number>(0),
                             in<Time>(0), in<Number>(0), in<Time>(0))
                       .value(),
                   1000);
  // A run one MTBF long is uninterrupted with probability 1/e.
  EXPECT_NEAR(uninterruptedProbability(M, M).value(), std::exp(-1.0), 1e-15);
}

TEST(Checkpoint, YoungAndDalyAsPublished) {
  using namespace mlsc::q;
  const double Min = 60, H = 3600;
  // Young: delta = 60 s, M = 10 h: sqrt(2 x 60 x 36,000) = 2,078.46 s.
  EXPECT_NEAR(youngInterval(in<Time>(60), in<Time>(10 * H)).value(), 2078.46,
              0.01);
  // Daly's worked cases (FGCS 2006, figures 3-5): delta = 5 min and M = 24
  // h, 6 h, 15 min give tau_opt = 117, 57 and 9.1 min. By hand for 24 h:
  // x = 5 / 2,880; sqrt(2 x 5 x 1,440) = 120 min x (1 + sqrt(x) / 3 + x /
  // 9) - 5 = 116.69 min.
  Time D = in<Time>(5 * Min);
  EXPECT_NEAR(dalyInterval(D, in<Time>(24 * H)).value() / Min, 116.69, 0.01);
  EXPECT_NEAR(dalyInterval(D, in<Time>(6 * H)).value() / Min, 56.71, 0.01);
  EXPECT_NEAR(dalyInterval(D, in<Time>(15 * Min)).value() / Min, 9.14, 0.01);
  // A write longer than twice the MTBF: checkpoint every MTBF.
  EXPECT_DOUBLE_EQ(dalyInterval(in<Time>(100), in<Time>(40)).value(), 40);
  // The complete model's wall time, T_s = 500 h, R = 10 min, M = 24 h at
  // tau = 116.69 min: 1,440 x e^(10/1,440) x (e^(121.69/1,440) - 1) x
  // 30,000 / 116.69 = 1,450.03 x 0.08818 x 257.09 = 32,873 min (547.9
  // h: 9.6% over the 500 h of compute); it is least at Daly's tau.
  Time Ts = in<Time>(500 * H), R = in<Time>(10 * Min), M = in<Time>(24 * H);
  Time Tau = dalyInterval(D, M);
  double Tw = dalyWallTime(Ts, Tau, D, R, M).value() / Min;
  EXPECT_NEAR(Tw,
              1440 * std::exp(10. / 1440) *
                  std::expm1((Tau.value() / Min + 5) / 1440) * 30000 /
                  (Tau.value() / Min),
              1e-6);
  EXPECT_NEAR(Tw, 32873, 1);
  EXPECT_LT(Tw, dalyWallTime(Ts, Tau * 0.8, D, R, M).value() / Min);
  EXPECT_LT(Tw, dalyWallTime(Ts, Tau * 1.25, D, R, M).value() / Min);
  // BLOOM's checkpoint: 176e9 parameters x (2 + 12) B = 2.464e12 B (2,295
  // GiB, "2.3TB").
  EXPECT_DOUBLE_EQ(
      checkpointSize(in<Number>(176e9), in<Bytes>(2), in<Bytes>(12)).value(),
      2.464e12);
}

TEST(Energy, EmbodiedCarbonAmortised) {
  // Chien et al.'s 318 kgCO2e per A100 over 5 years (43,800 h): 318,000 g
  // / 43,800 h = 7.26 g per GPU-hour (validation/COST-SOURCES.md C51).
  using namespace mlsc::q;
  const double H = 3600, Year = 365 * 86400.0;
  MassRate R =
      embodiedCarbonRate(in<Number>(1), in<Mass>(318), in<Time>(5 * Year));
  EXPECT_NEAR(R.value() * H * 1000, 7.260, 0.001);
  EXPECT_EQ(formula(FormulaId::EmbodiedCarbonRate).Result.str(), "kg/s");
}

TEST(Safety, DpSgdByImplementation) {
  using namespace mlsc::q;
  auto N = [](double V) { return in<Number>(V); };
  // Method 0 (none) costs nothing; 1, 2, 3 pick their slowdowns.
  EXPECT_DOUBLE_EQ(dpSgdSlowdown(N(0), N(3), N(1.6), N(1.25)).value(), 1);
  EXPECT_DOUBLE_EQ(dpSgdSlowdown(N(1), N(3), N(1.6), N(1.25)).value(), 3);
  EXPECT_DOUBLE_EQ(dpSgdSlowdown(N(2), N(3), N(1.6), N(1.25)).value(), 1.6);
  EXPECT_DOUBLE_EQ(dpSgdSlowdown(N(3), N(3), N(1.6), N(1.25)).value(), 1.25);
  // Naive: 32 examples' fp32 gradients of BERT's 7.6e6 trainable
  // parameters (Opacus's BERT case) are 32 x 7.6e6 x 4 B = 972.8 MB; the
  // published peak grew from 236 MB to 1,142 MB (906 MB more).
  EXPECT_DOUBLE_EQ(
      perSampleGradientBytes(N(1), N(32), N(7.6e6), in<Bytes>(4)).value(),
      972.8e6);
  EXPECT_DOUBLE_EQ(
      perSampleGradientBytes(N(2), N(32), N(7.6e6), in<Bytes>(4)).value(), 0);
}

TEST(Reasoning, AnswerTokensAndLatency) {
  using namespace mlsc::q;
  // Self-consistency with 40 samples (Wang et al.) of 2,200 thinking and
  // 200 answer tokens: 40 x 2,400 = 96,000 tokens an answer.
  EXPECT_DOUBLE_EQ(
      tokensPerAnswer(in<Number>(40), in<Tokens>(2200), in<Tokens>(200))
          .value(),
      96000);
  // 20 ms to the first token, then 2,399 more at 10 ms: 24.01 s.
  EXPECT_NEAR(
      answerLatency(in<Time>(0.020), in<Tokens>(2400), in<Time>(0.010)).value(),
      24.01, 1e-12);
  // A one-token answer is its first token.
  EXPECT_DOUBLE_EQ(
      answerLatency(in<Time>(0.020), in<Tokens>(1), in<Time>(0.010)).value(),
      0.020);
}

TEST(MultiTenant, ErlangCWaitAllenCunneen) {
  using namespace mlsc::q;
  // M/M/1 at rho = 0.5 with S = 1 h: C = rho, W_q = rho / (1 - rho) x S =
  // 1 h; all alike (M/D/1, cs = 0) half of it, Pollaczek-Khinchine's 0.5 h.
  const double H = 3600;
  RequestRate L = in<RequestRate>(0.5 / H);
  Time S = in<Time>(H);
  Number LogC = logErlangCOf(L, S, in<Number>(1));
  EXPECT_NEAR(jobQueueWait(LogC, L, S, in<Number>(1), in<Number>(1)).value(), H,
              1e-6);
  EXPECT_NEAR(jobQueueWait(LogC, L, S, in<Number>(1), in<Number>(0)).value(),
              0.5 * H, 1e-6);
  // 8 slots at 5.8767 Erlangs: C = 0.32883, W_q = 0.32883 x S / 2.1233.
  RequestRate L8 = in<RequestRate>(5.876666666666666 / H);
  Number LogC8 = logErlangCOf(L8, S, in<Number>(8));
  EXPECT_NEAR(std::exp(LogC8.value()), 0.328829, 1e-6);
  EXPECT_NEAR(jobQueueWait(LogC8, L8, S, in<Number>(8), in<Number>(1)).value() /
                  H,
              0.328829 / (8 - 5.876666666666666), 1e-6);
  // Past its slots the queue grows without bound.
  EXPECT_TRUE(std::isinf(jobQueueWait(LogC, in<RequestRate>(2 / H), S,
                                      in<Number>(1), in<Number>(1))
                             .value()));
}

TEST(Ingestion, TokenBytesAndStalls) {
  using namespace mlsc::q;
  // GPT-2's 50,257 ids fit 2 bytes; Llama 3's 128,256 need 4.
  EXPECT_DOUBLE_EQ(tokenIdBytes(in<Number>(50257)).value(), 2);
  EXPECT_DOUBLE_EQ(tokenIdBytes(in<Number>(128256)).value(), 4);
  // 8 V100s training ResNet-50 at 8,322 images/s x 114 kB = 0.949 GB/s
  // (DATA-TENANCY-SOURCES.md D53) from a 530 MB/s SATA SSD: 1 - 0.530 /
  // 0.949 = 0.441 of the time stalled.
  EXPECT_NEAR(
      ingestionStall(in<Bandwidth>(8322 * 114e3), in<Bandwidth>(530e6)).value(),
      1 - 530e6 / (8322 * 114e3), 1e-12);
  EXPECT_DOUBLE_EQ(
      ingestionStall(in<Bandwidth>(1e9), in<Bandwidth>(2e9)).value(), 0);
  // 1,040 images/s a V100 at 300 a core: 3.47 cores (Mohan et al.: 3-4);
  // with 3 cores, 1 - 900 / 1,040 = 0.135 stalled.
  EXPECT_NEAR(
      preprocessCores(in<SampleRate>(1040), in<SampleRate>(300)).value(),
      3.4667, 1e-4);
  EXPECT_NEAR(
      preprocessStall(in<SampleRate>(1040), in<Number>(3), in<SampleRate>(300))
          .value(),
      1 - 900.0 / 1040, 1e-12);
}

TEST(Locality, BisectionByTopology) {
  using namespace mlsc::q;
  auto N = [](double V) { return in<Number>(V); };
  Bandwidth B = in<Bandwidth>(400e9);
  // A non-blocking fat tree of 64 nodes: 64 x 400 GB/s / 2 = 12.8 TB/s;
  // at 7:1 oversubscription above pods of 32 nodes a seventh of it.
  EXPECT_DOUBLE_EQ(bisectionBandwidth(N(1), N(64), B, N(1), N(32)).value(),
                   12.8e12);
  EXPECT_NEAR(bisectionBandwidth(N(1), N(64), B, N(7), N(32)).value(),
              12.8e12 / 7, 1);
  // 64 nodes in one pod of 64 never cross the oversubscribed tier.
  EXPECT_DOUBLE_EQ(bisectionBandwidth(N(1), N(64), B, N(7), N(64)).value(),
                   12.8e12);
  // A 4 x 4 x 4 torus: the cut crosses 2 x 4^2 = 32 links of 400 / 6 GB/s.
  EXPECT_NEAR(bisectionBandwidth(N(3), N(64), B, N(1), N(32)).value(),
              32 * 400e9 / 6, 1);
  // A balanced dragonfly (a = 2p = 2h): g = a h + 1 groups of a p = 2 h^2
  // nodes, so N = a p g, about g^2; (g/2)^2 = N / 4 global channels of b
  // cross the cut. A ring cuts 2 links of b / 2.
  EXPECT_DOUBLE_EQ(bisectionBandwidth(N(4), N(64), B, N(1), N(32)).value(),
                   6.4e12);
  EXPECT_DOUBLE_EQ(bisectionBandwidth(N(5), N(64), B, N(1), N(32)).value(),
                   400e9);
  // One switch is non-blocking: an oversubscription does not apply.
  EXPECT_DOUBLE_EQ(bisectionBandwidth(N(0), N(64), B, N(4), N(1)).value(),
                   12.8e12);
  // One node has nothing to cut.
  EXPECT_DOUBLE_EQ(bisectionBandwidth(N(1), N(1), B, N(1), N(32)).value(), 0);
}

TEST(Locality, DiameterAndPathLatency) {
  using namespace mlsc::q;
  auto N = [](double V) { return in<Number>(V); };
  // One switch. Fat trees of 64-port switches, 8 NICs a node: 8 nodes (64
  // NICs) on one switch; 256 nodes (2,048 = 64^2 / 2 NICs) in two tiers,
  // leaf-spine-leaf, 3 switches (DGX SuperPOD's 8 scalable units); 512
  // nodes need a core tier (16 SU), 5; Llama 3's 24,576 GPUs fit three
  // tiers (64^3 / 4 = 65,536 NICs), 5.
  EXPECT_EQ(networkDiameter(N(0), N(64), N(8), N(64)).value(), 1);
  EXPECT_EQ(networkDiameter(N(1), N(8), N(8), N(64)).value(), 1);
  EXPECT_EQ(networkDiameter(N(1), N(256), N(8), N(64)).value(), 3);
  EXPECT_EQ(networkDiameter(N(2), N(512), N(8), N(64)).value(), 5);
  EXPECT_EQ(networkDiameter(N(1), N(3072), N(8), N(64)).value(), 5);
  EXPECT_EQ(networkDiameter(N(1), N(16384), N(8), N(64)).value(), 7);
  // Four tiers reach 64^4 / 8 = 2,097,152 NICs; a fifth beyond.
  EXPECT_EQ(networkDiameter(N(1), N(262144), N(8), N(64)).value(), 7);
  EXPECT_EQ(networkDiameter(N(1), N(262145), N(8), N(64)).value(), 9);
  // A 4 x 4 x 4 torus: 2 hops in each of 3 dimensions, 6 hops, 7 routers;
  // 8 x 8 x 8: 12 hops, 13 routers; 2 nodes need a cube of side 2: 3 hops.
  EXPECT_EQ(networkDiameter(N(3), N(64), N(8), N(64)).value(), 7);
  EXPECT_EQ(networkDiameter(N(3), N(512), N(8), N(64)).value(), 13);
  EXPECT_EQ(networkDiameter(N(3), N(2), N(8), N(64)).value(), 4);
  // A dragonfly: local, global, local - 4 routers; a ring of 10: 5 hops.
  EXPECT_EQ(networkDiameter(N(4), N(9856), N(4), N(64)).value(), 4);
  EXPECT_EQ(networkDiameter(N(5), N(10), N(8), N(64)).value(), 6);
  // One node: its own switch.
  EXPECT_EQ(networkDiameter(N(1), N(1), N(8), N(64)).value(), 1);
  // 1 us over one switch, 4 more switches at 0.5 us: 3 us.
  EXPECT_NEAR(pathLatency(in<Time>(1e-6), N(5), in<Time>(0.5e-6)).value(), 3e-6,
              1e-15);
  EXPECT_NEAR(pathLatency(in<Time>(1e-6), N(1), in<Time>(0.5e-6)).value(), 1e-6,
              1e-15);
}

TEST(Capital, OwnedClusterByHand) {
  using namespace mlsc::q;
  const double H = 3600, Year = 365 * 86400.0;
  // 8 GPUs at USD 25,000 x 1.64 = USD 328,000 a node; 4 nodes with the
  // network at 0.19 of the whole: 4 x 328,000 / 0.81 = USD 1,619,753.
  Money Node = nodePrice(in<Number>(8), in<Money>(25000), in<Number>(1.64));
  EXPECT_DOUBLE_EQ(Node.value(), 328000);
  Money Capex = clusterCapex(in<Number>(4), Node, in<Number>(0.19));
  EXPECT_NEAR(Capex.value(), 1619753.09, 0.01);
  // Over 5 years with 3% maintenance a year: 1,619,753 x 0.23 / 8,760 h =
  // USD 42.53 an hour.
  EXPECT_NEAR(
      ownershipCostRate(Capex, in<Time>(5 * Year), in<Number>(0.03)).value() *
          H,
      42.528, 0.001);
  // A facility at USD 12/W for 40.8 kW over 14 years: 489,600 / (14 x
  // 8,760) = USD 3.992 an hour.
  EXPECT_NEAR(facilityCostRate(in<MoneyPerPower>(12), in<Power>(40800),
                               in<Time>(14 * Year))
                      .value() *
                  H,
              3.9922, 0.0001);
  EXPECT_EQ(formula(FormulaId::OwnershipCostRate).Result.str(), "USD/s");
}

TEST(Capital, ElectricityBillOfARun) {
  // 1,287 MWh at USD 0.08/kWh: 1,287,000 x 0.08 = USD 102,960.
  using namespace mlsc::q;
  const double KWh = 3.6e6;
  Money M = energyCost(in<Energy>(1287e3 * KWh), in<EnergyPrice>(0.08 / KWh));
  EXPECT_NEAR(M.value(), 102960, 1e-6);
  EXPECT_EQ(formula(FormulaId::EnergyCost).W, Wall::Capital);
}

} // namespace

namespace {

TEST(ComputeWall, DecodeCrossoverBatchByHand) {
  // f = (2 x 1e9 + 4 x 1 x 10 x 4) / 1 = 2,000,000,160 FLOP per sequence;
  // m = 10 tok x 100 B/tok = 1,000 B. With peak 1e15 and BW 1e12 the FLOPs
  // cost f/1000 bytes-equivalent: B* = 2e9 / (2,000,000.16 - 1,000) = 1000.5.
  using namespace mlsc::q;
  Number One = in<Number>(1);
  Number B =
      decodeCrossoverBatch(in<Number>(1e9), One, in<Number>(4), in<Tokens>(10),
                           One, in<Bytes>(2e9), in<BytesPerToken>(100), One,
                           in<FlopRate>(1e15), One, in<Bandwidth>(1e12), One);
  EXPECT_NEAR(B.value(), 2e9 / (2000000.16 - 1000), 1e-9);
  // KV reads that outgrow the FLOPs: compute never binds.
  Number Never =
      decodeCrossoverBatch(in<Number>(1), One, One, in<Tokens>(10), One,
                           in<Bytes>(1), in<BytesPerToken>(1e6), One,
                           in<FlopRate>(1e15), One, in<Bandwidth>(1e12), One);
  EXPECT_TRUE(std::isinf(Never.value()));
}

} // namespace

namespace {

TEST(ComputeWall, MegatronTrainingFormulasByHand) {
  using namespace mlsc::q;
  auto N = [](double V) { return in<Number>(V); };
  // GPT-3 175B as Narayanan et al. train it (SC 2021): B = 1,536 sequences
  // of s = 2,048 tokens, l = 96 layers of h = 12,288, V = 51,200, with full
  // recompute (4 passes): 96 B s l h^2 = 4.3775e18, times 1 + 2,048 /
  // 73,728 + 51,200 / (16 x 96 x 12,288) = 1.030490, is 4.5110e18 FLOP.
  EXPECT_NEAR(megatronIterationFlops(N(1536), in<Tokens>(2048), N(96), N(12288),
                                     N(51200), N(4))
                      .value() /
                  4.510971e18,
              1, 1e-6);
  // Without recompute, 3 passes: three quarters of it.
  EXPECT_NEAR(megatronIterationFlops(N(1536), in<Tokens>(2048), N(96), N(12288),
                                     N(51200), N(3))
                      .value() /
                  (0.75 * 4.510971e18),
              1, 1e-6);
  // The bubble of 8 stages and 32 micro-batches: 7 / 32 = 21.875%; with 4
  // virtual stages a device, 7 / 128 = 5.47%.
  EXPECT_DOUBLE_EQ(pipelineBubbleFraction(N(8), N(32), N(1)).value(), 0.21875);
  EXPECT_DOUBLE_EQ(pipelineBubbleFraction(N(8), N(32), N(4)).value(),
                   0.0546875);
  // The paper's estimates (eq. 4): GPT-3 on 300e9 tokens, 1,024 GPUs at
  // 140 TFLOP/s: 8 x 300e9 x 175e9 / (1,024 x 140e12) s = 33.91 days
  // ("34 days"); 1T parameters on 450e9 tokens, 3,072 GPUs at 163 TFLOP/s:
  // 83.21 days (the paper prints 84).
  const double Day = 86400;
  EXPECT_NEAR(trainingTime(in<Tokens>(300e9), N(175e9), N(1024),
                           in<FlopRate>(140e12), N(4))
                      .value() /
                  Day,
              33.908, 1e-3);
  EXPECT_NEAR(trainingTime(in<Tokens>(450e9), N(1e12), N(3072),
                           in<FlopRate>(163e12), N(4))
                      .value() /
                  Day,
              83.211, 1e-3);
}

} // namespace
