//===- StepModelTest.cpp - The exported step model against the graph ------===//

#include "runtime/StepModel.h"
#include "StepModelFixture.h"
#include "passes/Pipeline.h"
#include "runtime/Evaluator.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace mlsc;

namespace {

using test::compileText;
const char *const Scenario = test::SmallDecoderScenario;

TEST(StepModel, DecodeStepsTheGraphNeverLoweredByHand) {
  auto C = compileText(Scenario, "t.mls");
  ASSERT_TRUE(C);
  Evaluator E(C->Graphs[0]);
  E.run();
  std::optional<StepModel> M = StepModel::of(E);
  ASSERT_TRUE(M);
  // The graph's own decode step: 2 sequences at ctx 1,100 read 20 GB of
  // weights + 2 x 1,100 x 20,480 B of KV: 20.045056 GB / (2 TB/s x 0.8,
  // the default memory efficiency) = 12.52816 ms, the GEMMs' 4e10 FLOP at
  // 1 PFLOP/s x 0.8 = 0.05 ms added to it (kernels.overlap 0), plus the
  // default fixed cost, 1 ms + 10 layers x 10 us = 1.1 ms.
  EXPECT_NEAR(M->time(2, 1099, 1), 13.67816e-3, 1e-15);
  // Four sequences with 500 cached tokens each, one new token: 20 GB +
  // 4 x 501 x 20,480 B = 20.04104192 GB / 1.6 TB/s = 12.5256512 ms, memory
  // bound, + the GEMMs' 8e10 FLOP at 1 PFLOP/s x 0.8 = 0.1 ms (attention's
  // 4 x 10 x 4 x 512 x 501 FLOP hide under the KV read), + 1.1 ms.
  StepTime T = M->step(4, 500, 1);
  EXPECT_NEAR(T.Bytes, 20.04104192e9, 1);
  EXPECT_NEAR(T.Flops, 2 * 10e9 * 4 + 4 * 10 * 4 * 512 * 501.0, 1);
  EXPECT_NEAR(T.Overhead, 1.1e-3, 1e-15);
  EXPECT_NEAR(T.Time, 13.7256512e-3, 1e-15);
  EXPECT_LT(T.Compute, T.Memory);
  // A chunk of 256 new tokens on 1,000 cached ones, one sequence: the
  // attention pairs are 256 x 1,000 + 256 x 257 / 2 = 288,896, 4 d_attn
  // FLOPs each in every layer (QK^T and scores x V).
  StepTime Chunk = M->step(1, 1000, 256);
  EXPECT_NEAR(Chunk.AttentionFlops, 4 * 10 * 512 * 288896.0, 1);
  EXPECT_NEAR(Chunk.Flops, 2 * 10e9 * 256 + 4 * 10 * 512 * 288896.0, 1);
}

/// Every decoder scenario of the examples and evaluation tests: the step
/// model at the graph's own operating points gives the graph's step times.
TEST(StepModel, ReproducesEveryGraphsPrefillAndDecode) {
  unsigned Checked = 0;
  for (const char *Dir : {"examples", "test/lit/eval"}) {
    std::string Root = std::string(MLSC_SOURCE_DIR) + "/" + Dir;
    std::error_code EC;
    std::vector<std::string> Files;
    for (llvm::sys::fs::directory_iterator It(Root, EC), End; It != End && !EC;
         It.increment(EC))
      if (llvm::StringRef(It->path()).endswith(".mls"))
        Files.push_back(It->path());
    std::sort(Files.begin(), Files.end());
    for (const std::string &F : Files) {
      auto Buf = llvm::MemoryBuffer::getFile(F);
      ASSERT_TRUE(bool(Buf)) << F;
      auto C = std::make_unique<Compilation>();
      C->Options.DataDir = MLSC_SOURCE_DIR;
      if (!compile(*C, std::move(*Buf)))
        continue; // a negative test
      for (const graph::Graph &G : C->Graphs) {
        Evaluator E(G);
        E.run();
        std::optional<StepModel> M = StepModel::of(E);
        if (!M)
          continue;
        // Prefill runs the batch; decode one micro-batch of the batch the
        // load keeps running (the slots full without an arrival rate, and
        // under static batching, whose batch at load is hidden).
        double Batch = E.value(MetricId::Batch);
        bool StaticAtLoad = G.findNamed("static.batch_time").has_value();
        double Running = G.has(MetricId::RunningBatch) && !StaticAtLoad
                             ? E.value(MetricId::RunningBatch)
                             : Batch;
        double Micro =
            Running / std::max(1.0, std::min(E.value(MetricId::PP), Running));
        double Context = E.value(*G.findNamed("decode.context"));
        // ctx = prompt + the running sequences' mean output so far.
        double S = Context - E.value(*G.findNamed("decode.half_output"));
        auto near = [](double A, double B) {
          return std::fabs(A - B) <= 1e-12 * std::fabs(B);
        };
        double Decode = E.value(MetricId::DecodeStepTime);
        double Prefill = E.value(MetricId::PrefillTime);
        EXPECT_PRED2(near, M->time(Micro, Context - 1, 1), Decode)
            << F << " " << G.Scenario;
        EXPECT_PRED2(near, M->time(Batch, 0, S), Prefill)
            << F << " " << G.Scenario;
        StepTime T = M->step(Micro, Context - 1, 1);
        EXPECT_PRED2(near, T.Memory,
                     E.value(G.get(PhaseId::Decode, PhaseMetricId::MemoryTime)))
            << F << " " << G.Scenario;
        EXPECT_PRED2(near, T.Comm,
                     E.value(G.get(PhaseId::Decode, PhaseMetricId::CommTime)))
            << F << " " << G.Scenario;
        ++Checked;
      }
    }
  }
  // Dense, MoE, MLA, quantized, pruned, streamed and TP scenarios.
  EXPECT_GE(Checked, 20u);
}

} // namespace
