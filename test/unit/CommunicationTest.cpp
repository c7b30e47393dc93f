//===- CommunicationTest.cpp - Known answers for wall 14 (collectives) ----===//
//
// Each expected value is a published figure or a hand calculation written
// out in the test. S3 (ANCHORS.md) is a calibration figure: the test that
// uses it says so, and it is not evidence of accuracy.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <cmath>

#include <gtest/gtest.h>

using namespace mlsc;
using namespace mlsc::q;
using namespace mlsc::walls;

namespace {

const Number One = in<Number>(1);
const Time NoLatency = in<Time>(0);

TEST(CommunicationWall, RingAllReduceWithoutLatencyIsTheBandwidthTerm) {
  // alpha = 0: 2(N-1)/N * M/beta = 2 x 3/4 x 1 GB / 100 GB/s = 15 ms.
  Bytes M = in<Bytes>(1e9);
  Number N = in<Number>(4);
  Bandwidth Beta = in<Bandwidth>(100e9);
  EXPECT_NEAR(ringAllReduceTime(M, N, Beta, One, NoLatency).value(), 0.015,
              1e-15);
  // All-gather and reduce-scatter move half of it: 3/4 x 10 ms = 7.5 ms.
  EXPECT_NEAR(ringAllGatherTime(M, N, Beta, One, NoLatency).value(), 0.0075,
              1e-15);
  EXPECT_NEAR(ringReduceScatterTime(M, N, Beta, One, NoLatency).value(), 0.0075,
              1e-15);
  // An efficiency of 0.5 halves the achieved bandwidth: 30 ms.
  EXPECT_NEAR(ringAllReduceTime(M, N, Beta, in<Number>(0.5), NoLatency).value(),
              0.030, 1e-15);
}

TEST(CommunicationWall, RingLatencyTermIsTwoNMinusOneSteps) {
  // An empty message over 4 ranks at 1 us per step: 2 x 3 x 1 us = 6 us;
  // half of that for all-gather.
  Bandwidth Beta = in<Bandwidth>(100e9);
  Time Alpha = in<Time>(1e-6);
  EXPECT_NEAR(
      ringAllReduceTime(in<Bytes>(0), in<Number>(4), Beta, One, Alpha).value(),
      6e-6, 1e-18);
  EXPECT_NEAR(
      ringAllGatherTime(in<Bytes>(0), in<Number>(4), Beta, One, Alpha).value(),
      3e-6, 1e-18);
}

TEST(CommunicationWall, OneRankCommunicatesNothing) {
  // Not even the call's fixed cost: one rank calls no all-reduce.
  EXPECT_EQ(tensorParallelLayerTime(in<Bytes>(1e9), One, in<Number>(8),
                                    in<Bandwidth>(1e9), in<Time>(1e-6),
                                    in<Bandwidth>(1e9), in<Time>(1e-6), One,
                                    in<Time>(5e-6))
                .value(),
            0.0);
}

TEST(CommunicationWall, Llama70BDecodeLayerAtTP8ByHand) {
  // Decode, batch 32, one token each, hidden 8,192, bf16 activations:
  // M = 32 x 1 x 8,192 x 2 B = 524,288 B.
  Bytes M = tensorParallelMessage(in<Number>(32), in<Tokens>(1),
                                  in<Number>(8192), in<Bytes>(2));
  EXPECT_DOUBLE_EQ(M.value(), 524288.0);
  // TP 8 over NVLink 4 (450 GB/s per direction), 1 us per step:
  // all-reduce = 2 x 7/8 x 524,288 / 450e9 + 14 us = 2.0389 + 14 us;
  // two per layer: 32.078 us. Latency, not bandwidth, dominates decode.
  Time Layer = tensorParallelLayerTime(
      M, in<Number>(8), in<Number>(8), in<Bandwidth>(450e9), in<Time>(1e-6),
      in<Bandwidth>(50e9), in<Time>(5e-6), One, in<Time>(0));
  EXPECT_NEAR(Layer.value(), 2 * (1.75 * 524288 / 450e9 + 14e-6), 1e-18);
  EXPECT_NEAR(Layer.value() * 1e6, 32.078, 5e-4);
  // With each call's fixed cost (overhead.collective, 5 us by default):
  // 2 x (2.0389 + 14 + 5) us = 42.078 us.
  Layer = tensorParallelLayerTime(
      M, in<Number>(8), in<Number>(8), in<Bandwidth>(450e9), in<Time>(1e-6),
      in<Bandwidth>(50e9), in<Time>(5e-6), One, in<Time>(5e-6));
  EXPECT_NEAR(Layer.value() * 1e6, 42.078, 5e-4);
}

TEST(CommunicationWall, TensorParallelAcrossNodesCrossesTheNetwork) {
  // Issue 12, item 2: tp 16 over two DGX H100 nodes (8 GPUs each, NVLink 4
  // at 450 GB/s and 1 us; one 400 Gb/s NIC per GPU, 50 GB/s and 5 us).
  // Decode at batch 32 of Llama-3.1-70B: M = 524,288 B, as above.
  Bytes M = in<Bytes>(524288);
  Bandwidth NVLink = in<Bandwidth>(450e9), IB = in<Bandwidth>(50e9);
  Time A = in<Time>(1e-6), AInter = in<Time>(5e-6);
  // Reduce-scatter in the node: 7/8 x M / 450e9 + 7 us = 1.0194 + 7 us;
  // all-reduce of M/8 = 65,536 B across the 2 nodes:
  //   2 x 1/2 x 65,536 / 50e9 + 2 x 5 us = 1.31072 + 10 us;
  // all-gather in the node: 1.0194 + 7 us.
  double RS = 7.0 / 8 * 524288 / 450e9 + 7e-6;
  double AR = 65536 / 50e9 + 10e-6;
  Time Hier = hierarchicalAllReduceTime(M, in<Number>(16), in<Number>(8),
                                        NVLink, A, IB, AInter, One);
  EXPECT_NEAR(Hier.value(), RS + AR + RS, 1e-15);
  EXPECT_NEAR(Hier.value() * 1e6, 27.35, 0.01);
  // What the model did before: one ring of 16 on NVLink, 2 x 15/16 x M /
  // 450e9 + 30 us = 32.18 us. Its latency part (30 steps of 1 us) is the
  // larger one at this size; the bandwidth parts show what crossing the
  // network costs: 2 x 15/16 x M / 450e9 = 2.18 us on NVLink alone,
  // against 2 x 7/8 x M / 450e9 + (M/8) / 50e9 = 2.04 + 1.31 = 3.35 us
  // when the 65,536 B per GPU go over the NICs.
  Time Ring = ringAllReduceTime(M, in<Number>(16), NVLink, One, A);
  EXPECT_NEAR(Ring.value() * 1e6, 32.18, 0.01);
  Time Zero = in<Time>(0);
  EXPECT_NEAR(ringAllReduceTime(M, in<Number>(16), NVLink, One, Zero).value() *
                  1e6,
              2.184, 0.001);
  EXPECT_NEAR(hierarchicalAllReduceTime(M, in<Number>(16), in<Number>(8),
                                        NVLink, Zero, IB, Zero, One)
                      .value() *
                  1e6,
              3.350, 0.001);
  // A prefill's message is bandwidth-bound: one 2,048-token prompt,
  // M = 2,048 x 8,192 x 2 B = 33.55 MB. NVLink ring: 139.8 us; across
  // the nodes: 2 x 7/8 x M / 450e9 + (M/8) / 50e9 = 130.5 + 83.9 us.
  Bytes Prompt = in<Bytes>(2048.0 * 8192 * 2);
  EXPECT_NEAR(
      ringAllReduceTime(Prompt, in<Number>(16), NVLink, One, Zero).value() *
          1e6,
      139.8, 0.1);
  EXPECT_NEAR(hierarchicalAllReduceTime(Prompt, in<Number>(16), in<Number>(8),
                                        NVLink, Zero, IB, Zero, One)
                      .value() *
                  1e6,
              214.3, 0.1);
  // Within a node the hierarchical form is the ring.
  EXPECT_DOUBLE_EQ(hierarchicalAllReduceTime(M, in<Number>(8), in<Number>(8),
                                             NVLink, A, IB, AInter, One)
                       .value(),
                   ringAllReduceTime(M, in<Number>(8), NVLink, One, A).value());
  // A layer's two all-reduces.
  EXPECT_DOUBLE_EQ(tensorParallelLayerTime(M, in<Number>(16), in<Number>(8),
                                           NVLink, A, IB, AInter, One,
                                           in<Time>(0))
                       .value(),
                   2 * Hier.value());
}

TEST(CommunicationWall, TreeBeatsTheRingAcrossManyNodesForSmallMessages) {
  using namespace mlsc::q;
  // NCCL's double binary tree over 1,024 nodes, 50 GB/s NICs, 1 us, eta 1:
  // 2 x 1 MB / 50 GB/s = 40 us + 2 log2(1024) = 20 latencies = 60 us; the
  // ring pays 2 x 1,023 = 2,046 latencies, 2.046 ms, for about the same
  // 40 us of bandwidth.
  Bytes M = in<Bytes>(1e6);
  Bandwidth B = in<Bandwidth>(50e9);
  Time A = in<Time>(1e-6);
  EXPECT_NEAR(
      treeAllReduceTime(M, in<Number>(1024), B, in<Number>(1), A).value(),
      60e-6, 1e-12);
  EXPECT_NEAR(
      ringAllReduceTime(M, in<Number>(1024), B, in<Number>(1), A).value(),
      2 * 1023.0 / 1024 * 1e6 / 50e9 + 2046e-6, 1e-12);
  // The hierarchical all-reduce takes the tree across those nodes (8 GPUs
  // each, 450 GB/s NVLink, 1 us): 2 x 7/8 x 8 MB / 450 GB/s + 14 us in the
  // nodes, 60 us across them.
  Time Hier =
      hierarchicalAllReduceTime(in<Bytes>(8e6), in<Number>(8192), in<Number>(8),
                                in<Bandwidth>(450e9), A, B, A, in<Number>(1));
  EXPECT_NEAR(Hier.value(), 2 * 7.0 / 8 * 8e6 / 450e9 + 14e-6 + 60e-6, 1e-12);
  // A large message over two nodes stays on the ring: it moves half as
  // much (2 x 1/2 x M against the tree's 2 M).
  EXPECT_LT(
      ringAllReduceTime(in<Bytes>(1e9), in<Number>(2), B, in<Number>(1), A)
          .value(),
      treeAllReduceTime(in<Bytes>(1e9), in<Number>(2), B, in<Number>(1), A)
          .value());
  EXPECT_EQ(treeAllReduceTime(M, in<Number>(1), B, in<Number>(1), A).value(),
            0.0);
}

TEST(CommunicationWall, PipelineSendsUseTheLinkEachBoundaryIsOn) {
  // Issue 12, item 1: the hidden state of one decode token of a batch of 32
  // at hidden 8,192 in bf16 is M = 524,288 B.
  Bytes M = in<Bytes>(524288);
  Bandwidth NVLink = in<Bandwidth>(450e9), IB = in<Bandwidth>(50e9);
  Time A = in<Time>(1e-6), AInter = in<Time>(5e-6);
  double Intra = 1e-6 + 524288 / 450e9; // 2.165 us
  double Inter = 5e-6 + 524288 / 50e9;  // 15.486 us
  // pp 8 at tp 1 in one 8-GPU node: 7 boundaries, all on NVLink.
  EXPECT_NEAR(pipelineP2PTime(M, in<Number>(8), One, in<Number>(8), NVLink, A,
                              IB, AInter, One)
                  .value(),
              7 * Intra, 1e-15);
  // tp 8 x pp 4 on four nodes: a stage fills a node, and every one of the
  // 3 boundaries is between nodes.
  EXPECT_NEAR(pipelineP2PTime(M, in<Number>(4), in<Number>(8), in<Number>(8),
                              NVLink, A, IB, AInter, One)
                  .value(),
              3 * Inter, 1e-15);
  // tp 2 x pp 8 on two nodes: 4 stages a node, so 1 of the 7 boundaries
  // is between nodes.
  EXPECT_NEAR(pipelineP2PTime(M, in<Number>(8), in<Number>(2), in<Number>(8),
                              NVLink, A, IB, AInter, One)
                  .value(),
              6 * Intra + Inter, 1e-15);
  // One stage sends nothing.
  EXPECT_EQ(pipelineP2PTime(M, One, in<Number>(8), in<Number>(8), NVLink, A, IB,
                            AInter, One)
                .value(),
            0.0);
}

TEST(CommunicationWall, ExpertAllToAllCrossesTheLinksItSpans) {
  // Issue 12, item 12: DeepSeek-V3 decode, a rank's 32 tokens of hidden
  // 7,168 in bf16 routed to 8 experts: 32 x 7,168 x 2 B x 8 = 3,670,016 B.
  // Expert parallelism 8 in one DGX H100 (NVLink 4: 450 GB/s, 1 us):
  // dispatch and combine, each 7 x 1 us + 7/8 x 3.67 MB / 450 GB/s =
  // 7 + 7.136 us: 28.27 us a layer.
  Bytes Routed = in<Bytes>(32.0 * 7168 * 2 * 8);
  Bandwidth NVLink = in<Bandwidth>(450e9), IB = in<Bandwidth>(50e9);
  Time A = in<Time>(1e-6), AInter = in<Time>(5e-6);
  auto at = [&](double EP, double Devices, double Groups = 0,
                double PerToken = 0, double Ratio = 1) {
    return expertAllToAllTime(Routed, in<Number>(EP), in<Number>(Devices),
                              in<Number>(8), NVLink, A, IB, AInter, One,
                              in<Number>(8), in<Number>(Groups),
                              in<Number>(PerToken), in<Number>(Ratio))
        .value();
  };
  EXPECT_NEAR(at(8, 8), 2 * (7e-6 + 7.0 / 8 * 3670016 / 450e9), 1e-15);
  EXPECT_NEAR(at(8, 8) * 1e6, 28.27, 0.01);
  // Expert parallelism 32 over four nodes (8 ranks a node): of a token's 8
  // copies, 8 x 24/32 = 6 go to the other nodes' 24 ranks over InfiniBand
  // (50 GB/s, 5 us here) and 8 x 7/32 = 1.75 to the node's 7 others over
  // NVLink, at once. A copy is 458,752 B: InfiniBand 24 x 5 us + 6 x
  // 458,752 B / 50 GB/s = 120 + 55.05 us; NVLink 7 x 1 us + 1.75 x
  // 458,752 B / 450 GB/s = 8.78 us. Twice the slower: 350.1 us a layer,
  // 12 times the in-node figure.
  double Copy = 3670016.0 / 8;
  EXPECT_NEAR(at(32, 32), 2 * (24 * 5e-6 + 6 * Copy / 50e9), 1e-15);
  EXPECT_NEAR(at(32, 32) * 1e6, 350.1, 0.1);
  // With tp 2 a rank takes two devices: 4 ranks a node, 8 nodes; 8 x 28/32
  // = 7 copies leave the node, to 28 ranks.
  EXPECT_NEAR(at(32, 64), 2 * (28 * 5e-6 + 7 * Copy / 50e9), 1e-15);
  // ep 12 on two nodes of 8: the slowest rank is on the node of 4, whose
  // 8 x 8/12 copies go to 8 ranks over InfiniBand and 8 x 3/12 to its 3
  // neighbours: 8 x 5 us + 5.333 x 458,752 B / 50 GB/s = 88.93 us one way.
  EXPECT_NEAR(at(12, 12), 2 * (8 * 5e-6 + 8.0 * 8 / 12 * Copy / 50e9), 1e-15);
  // One rank routes nothing.
  EXPECT_EQ(at(1, 8), 0.0);
}

TEST(CommunicationWall, NodeLimitedDispatchSendsATokenOnceANode) {
  // DeepSeek-V3 training (arXiv 2412.19437, section 3.2.2): ep 64 over 8
  // nodes of 8, 256 experts in 8 groups, a token's 8 experts in at most 4
  // of them. Eight independent picks over 8 nodes reach 8 (1 - (7/8)^8) =
  // 5.25 nodes on average, so the 4 groups bind: 4 nodes, 4 x 7/8 = 3.5 of
  // them remote, each sent the token once over InfiniBand; inside the
  // receiving nodes 8 x 7/8 = 7 copies move over NVLink. Per copy 458,752 B
  // (as above): InfiniBand 7 x 5 us + 3.5 x 458,752 B / 50 GB/s = 35 +
  // 32.11 us; NVLink 7 x 1 us + 7 x 458,752 B / 450 GB/s = 7 + 7.14 us.
  Bytes Routed = in<Bytes>(32.0 * 7168 * 2 * 8);
  Bandwidth NVLink = in<Bandwidth>(450e9), IB = in<Bandwidth>(50e9);
  Time A = in<Time>(1e-6), AInter = in<Time>(5e-6);
  double Copy = 3670016.0 / 8;
  auto at = [&](double Groups, double PerToken, double Ratio) {
    return expertAllToAllTime(Routed, in<Number>(64), in<Number>(64),
                              in<Number>(8), NVLink, A, IB, AInter, One,
                              in<Number>(8), in<Number>(Groups),
                              in<Number>(PerToken), in<Number>(Ratio))
        .value();
  };
  double OneWay = 7 * 5e-6 + 3.5 * Copy / 50e9;
  EXPECT_NEAR(at(8, 4, 1), 2 * OneWay, 1e-15);
  EXPECT_NEAR(at(8, 4, 1) * 1e6, 134.2, 0.1);
  // The plain all-to-all sends 8 x 56/64 = 7 copies to 56 ranks: 2 x (280
  // + 64.23) us = 688.5 us, 5.1 times as long.
  double Plain =
      expertAllToAllTime(Routed, in<Number>(64), in<Number>(64), in<Number>(8),
                         NVLink, A, IB, AInter, One, in<Number>(8),
                         in<Number>(0), in<Number>(0), One)
          .value();
  EXPECT_NEAR(Plain, 2 * (56 * 5e-6 + 7 * Copy / 50e9), 1e-15);
  // An FP8 dispatch (1 B of the activations' 2): the dispatch's bytes
  // halve, the bf16 combine's do not: 35 + 16.06 us, then 67.11 us.
  EXPECT_NEAR(at(8, 4, 0.5), (7 * 5e-6 + 0.5 * 3.5 * Copy / 50e9) + OneWay,
              1e-15);
  // Groups that do not bind: 8 groups, 8 a token, reach min(8, 5.25).
  EXPECT_NEAR(
      at(8, 8, 1),
      2 * (7 * 5e-6 + 8 * (1 - std::pow(7.0 / 8, 8)) * 7 / 8 * Copy / 50e9),
      1e-15);
  // Fewer groups than nodes: 4 groups over 8 nodes, 2 a token, each
  // group on 2 nodes: a token may reach 2 x 2 = 4 nodes.
  EXPECT_NEAR(at(4, 2, 1), 2 * OneWay, 1e-15);
}

TEST(CommunicationWall, NcclBusBandwidthRelation) {
  // busbw = algbw x 2(N-1)/N. For 8 GPUs, S3's 370 GB/s bus bandwidth is an
  // algorithm bandwidth of 370 x 8/14 = 211.43 GB/s.
  Bandwidth AlgBW = in<Bandwidth>(370e9 * 8 / 14);
  EXPECT_NEAR(AlgBW.value() / 1e9, 211.43, 0.005);
  EXPECT_NEAR(allReduceBusBandwidth(AlgBW, in<Number>(8)).value(), 370e9, 1e-3);
  // algbw = M / t: 1 GB in 10 ms is 100 GB/s.
  EXPECT_DOUBLE_EQ(algorithmBandwidth(in<Bytes>(1e9), in<Time>(0.01)).value(),
                   100e9);
}

TEST(CommunicationWall, H100RingAllReduceReproducesS3) {
  // CALIBRATED ON S3 (ANCHORS.md): eta = 0.82 is S3's 370 GB/s ring bus
  // bandwidth over NVLink 4's 450 GB/s per direction (0.822, rounded). This
  // checks the model's algbw/busbw chain against the figure it was tuned
  // on; it is not evidence of accuracy.
  const Number EtaCalibratedOnS3 = in<Number>(0.82);
  // nccl-tests all_reduce_perf, 8 GPUs, a large (8 GiB) message; 1 us per
  // step (the registry's NVLink latency estimate) is negligible at this size.
  Bytes M = in<Bytes>(8.0 * (1ull << 30));
  Number N = in<Number>(8);
  Time T = ringAllReduceTime(M, N, in<Bandwidth>(450e9), EtaCalibratedOnS3,
                             in<Time>(1e-6));
  Bandwidth BusBW = allReduceBusBandwidth(algorithmBandwidth(M, T), N);
  EXPECT_NEAR(BusBW.value() / 370e9, 1.0, 0.15);
  // For large messages the ring's bus bandwidth is the achieved link rate
  // beta * eta = 369 GB/s, whatever N is; the 14 us of latency take
  // 369 x 14e-6 / (1.75 x 8 GiB / 369 GB/s) = 0.13 GB/s off it.
  EXPECT_NEAR(BusBW.value() / 1e9, 450 * 0.82 - 0.13, 0.005);
}

TEST(CommunicationWall, FormulasCarryWallAndDimensions) {
  EXPECT_EQ(formula(FormulaId::RingAllReduceTime).W, Wall::Communication);
  EXPECT_EQ(formula(FormulaId::TensorParallelLayerTime).W, Wall::Communication);
  EXPECT_EQ(formula(FormulaId::RingAllReduceTime).Result.str(), "s");
  ASSERT_EQ(formula(FormulaId::RingAllReduceTime).Params.size(), 5u);
  EXPECT_EQ(formula(FormulaId::RingAllReduceTime).Params[2].str(), "B/s");
  EXPECT_EQ(formula(FormulaId::TensorParallelMessage).Result.str(), "B");
  EXPECT_EQ(formula(FormulaId::AllReduceBusBandwidth).Result.str(), "B/s");
}

} // namespace

namespace {

TEST(CommunicationWall, BusiestExpertParallelRankByHand) {
  // 9e9 parameters, 3e9 active, 8 experts, top-2: an expert holds (9e9 -
  // 3e9) / (8 - 2) = 1e9, the always-active part is 9e9 - 8e9 = 1e9 and a
  // token's routed part 2e9. The busiest rank at 1.2x the mean load costs
  // 1e9 + 1.2 x 2e9 = 3.4e9 a token; balanced, the 3e9 active ones.
  using namespace mlsc::q;
  auto N = [](double V) { return in<Number>(V); };
  EXPECT_DOUBLE_EQ(
      walls::moeBusiestRankParams(N(9e9), N(3e9), N(8), N(2), N(1.2)).value(),
      3.4e9);
  EXPECT_DOUBLE_EQ(
      walls::moeBusiestRankParams(N(9e9), N(3e9), N(8), N(2), N(1)).value(),
      3e9);
}

} // namespace
