//===- EvaluatorTest.cpp - Graph evaluation and re-evaluation -------------===//

#include "runtime/Evaluator.h"
#include "passes/Pipeline.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlsc;

namespace {

const char *const Scenario = R"(
accelerator gpu { hbm.capacity = 80 GB; hbm.bandwidth = 2 TB/s; tdp = 700 W
                  peak.bf16 = 1000 TFLOP/s }
precision bf16 { bytes = 2 B }
model m { params = 10e9; layers = 10; heads = 8; head_dim = 64; kv_heads = 8 }
workload w : inference { model = m; precision = bf16; prompt = 1000 tok
                         output = 200 tok; batch = 2 }
scenario s { workload = w; system = gpu; sla { decode_step_time < 20 ms } }
)";

std::unique_ptr<Compilation> build() {
  auto C = std::make_unique<Compilation>();
  C->Options.LoadPrelude = false;
  C->Options.DataDir = MLSC_SOURCE_DIR;
  EXPECT_TRUE(
      compile(*C, llvm::MemoryBuffer::getMemBufferCopy(Scenario, "t.mls")));
  EXPECT_EQ(C->Graphs.size(), 1u);
  return C;
}

graph::NodeId node(const graph::Graph &G, const char *Name) {
  std::optional<graph::NodeId> Id = G.findNamed(Name);
  EXPECT_TRUE(Id.has_value()) << Name;
  return Id.value_or(graph::NodeId(0));
}

TEST(Evaluator, DecodeStepByHand) {
  auto C = build();
  Evaluator E(C->Graphs[0]);
  E.run();
  // Weights 10e9 x 2 B = 20 GB. KV per token 2 x 10 x 8 x 64 x 2 B = 20,480 B.
  // Context 1000 + 200/2 = 1100 tok; 2 sequences: 45,056,000 B.
  // (20e9 + 45,056,000) B / (2 TB/s x 0.8, the default memory efficiency)
  // = 12.52816 ms; the GEMMs' 2 x 10e9 x 2 = 4e10 FLOP at 1 PFLOP/s x 0.8
  // take 0.05 ms more (kernels.overlap 0: they add to the weight read);
  // plus the default fixed cost of a step, 1 ms + 10 layers x 10 us =
  // 1.1 ms: 13.67816 ms.
  EXPECT_DOUBLE_EQ(E.value(node(C->Graphs[0], "kv_bytes_per_token")), 20480);
  EXPECT_NEAR(E.value(node(C->Graphs[0], "decode_step_time")), 13.67816e-3,
              1e-12);
  const graph::Condition &Sla = C->Graphs[0].Conditions.at(0);
  ASSERT_TRUE(Sla.At.has_value());
  EXPECT_EQ(E.value(*Sla.At), 1.0);
}

TEST(Evaluator, ChangingALeafRecomputesWithoutRelowering) {
  auto C = build();
  const graph::Graph &G = C->Graphs[0];
  Evaluator E(G);
  E.run();
  double Before = E.value(node(G, "decode.memory_time"));
  graph::NodeId BW = node(G, "gpu.hbm.bandwidth");
  E.setLeaf(BW, 1e12); // halve the bandwidth
  E.run();
  EXPECT_DOUBLE_EQ(E.value(node(G, "decode.memory_time")), 2 * Before);
  // The SLA now fails: 20.05 ms > 20 ms.
  EXPECT_EQ(E.value(*G.Conditions[0].At), 0.0);
  E.resetLeaves();
  E.run();
  EXPECT_EQ(E.value(node(G, "decode.memory_time")), Before);
}

TEST(Evaluator, RepeatedRunsAreBitIdentical) {
  auto C = build();
  Evaluator A(C->Graphs[0]), B(C->Graphs[0]);
  A.run();
  B.run();
  B.run();
  EXPECT_EQ(A.values(), B.values());
}

TEST(Evaluator, InheritedDerivedFieldsFollowOverrides) {
  // A field computed from another field is lowered as arithmetic, so
  // changing the input leaf changes it.
  auto C = std::make_unique<Compilation>();
  C->Options.LoadPrelude = false;
  ASSERT_TRUE(
      compile(*C, llvm::MemoryBuffer::getMemBufferCopy(
                      std::string(Scenario) +
                          "accelerator slow : gpu { hbm.bandwidth = "
                          "0.5 * gpu.hbm.bandwidth }\n"
                          "scenario t { workload = w; system = slow }\n",
                      "t.mls")));
  ASSERT_EQ(C->Graphs.size(), 2u);
  Evaluator Fast(C->Graphs[0]), Slow(C->Graphs[1]);
  Fast.run();
  Slow.run();
  EXPECT_DOUBLE_EQ(Slow.value(node(C->Graphs[1], "decode.memory_time")),
                   2 * Fast.value(node(C->Graphs[0], "decode.memory_time")));
}

} // namespace

namespace {

TEST(Evaluator, PlanRecomputesOnlyDependentsBitIdentically) {
  auto C = build();
  const graph::Graph &G = C->Graphs[0];
  graph::NodeId BW = node(G, "gpu.hbm.bandwidth"), TDP = node(G, "gpu.tdp");
  Evaluator Full(G), Planned(G);
  Full.run();
  Planned.run();
  EvalPlan P = Planned.plan({BW});
  // The bandwidth reaches the memory times and what follows from them, but
  // not the FLOP counts or the power.
  EXPECT_LT(P.Instrs.size(), Planned.size());
  EvalPlan PowerOnly = Planned.plan({TDP});
  EXPECT_LT(PowerOnly.Instrs.size(), P.Instrs.size());
  double Before = Planned.value(node(G, "power"));
  for (double V : {0.5e12, 3.35e12, 8e12, 1e15}) {
    Full.setLeaf(BW, V);
    Full.run();
    Planned.setLeaf(BW, V);
    Planned.run(P);
    for (uint32_t I = 0; I < G.Nodes.size(); ++I) {
      double A = Full.value(graph::NodeId(I)),
             B = Planned.value(graph::NodeId(I));
      EXPECT_TRUE(A == B || (std::isnan(A) && std::isnan(B)))
          << G.Nodes[I].Name << ": " << A << " vs " << B;
    }
  }
  // The power did not depend on the bandwidth, so it was never recomputed.
  EXPECT_EQ(Planned.value(node(G, "power")), Before);
}

} // namespace
