//===- SimulatorTest.cpp - The serving simulator against queueing theory --===//

#include "runtime/sim/Simulator.h"
#include "StepModelFixture.h"
#include "passes/Pipeline.h"
#include "runtime/Evaluator.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlsc;
using namespace mlsc::sim;

namespace {

/// Every iteration takes Tau, whatever it runs.
StepFunction constant(double Tau) {
  return [Tau](const StepShape &) { return Tau; };
}

/// One slot, prompts of one token, geometric outputs of mean K at Tau an
/// iteration: a request is served in K iterations (its prefill samples the
/// first token), an M/G/1 queue with service S = Tau K.
Config mg1(double Rate, double MeanOutput, uint64_t Requests) {
  Config C;
  C.Replicas = 1;
  C.MaxSequences = 1;
  C.MaxBatchedTokens = 1;
  C.ArrivalRate = Rate;
  C.Prompt = {Length::Kind::Fixed, 1, 0};
  C.Output = {Length::Kind::Geometric, MeanOutput, 0};
  C.Requests = Requests;
  C.Seed = 7;
  return C;
}

TEST(Simulator, MG1WaitMatchesPollaczekKhinchine) {
  // Service: 2 ms x K, K geometric with p = 1/50: E[S] = 0.1 s, E[K^2] =
  // (2 - p) / p^2 = 4,950, E[S^2] = 4e-6 x 4,950 = 0.0198 s^2 (CV^2 = 0.98,
  // all but exponential). At 5 req/s, rho = 0.5: Pollaczek-Khinchine W_q =
  // lambda E[S^2] / (2 (1 - rho)) = 5 x 0.0198 / 1 = 0.099 s; M/M/1's
  // rho / (mu - lambda) = 0.5 / 5 = 0.1 s.
  Result R = simulate(mg1(5, 50, 1000000), constant(2e-3));
  EXPECT_EQ(R.Completed, 1000000u);
  EXPECT_NEAR(R.QueueWait.Mean / 0.099, 1, 0.03);
  EXPECT_NEAR(R.QueueWait.Mean / 0.1, 1, 0.03);
  // M/M/1's waiting time: P(W_q > t) = rho exp(-(mu - lambda) t), so its
  // 99th percentile is ln(rho / 0.01) / (mu - lambda) = ln 50 / 5 = 0.7824
  // s.
  EXPECT_NEAR(R.QueueWait.P99 / 0.7824, 1, 0.03);
  // The time in system is the wait and the service, E[S] = 0.1 s.
  EXPECT_NEAR(R.E2E.Mean / 0.199, 1, 0.03);
}

TEST(Simulator, SharedQueueMatchesErlangC) {
  // Four replicas of one slot, service as above (E[S] = 0.1 s), 32 req/s:
  // a = 3.2 erlangs, rho = 0.8. Erlang C: sum_{k<4} a^k / k! = 1 + 3.2 +
  // 5.12 + 5.4613 = 14.7813; a^4 / 4! x 4 / (4 - 3.2) = 4.3691 x 5 =
  // 21.8453; C = 21.8453 / 36.6266 = 0.59644; W_q = C / (c mu - lambda) =
  // 0.59644 / 8 = 74.56 ms. One shared queue (late binding) is M/G/c.
  Config C = mg1(32, 50, 400000);
  C.Replicas = 4;
  C.Route = Routing::SharedQueue;
  Result R = simulate(C, constant(2e-3));
  EXPECT_NEAR(R.QueueWait.Mean / 0.07456, 1, 0.03);
  // Least-outstanding routing binds a request to a replica at arrival, and
  // it may wait there behind a long service while another replica frees:
  // it waits longer than the shared queue.
  C.Route = Routing::LeastOutstanding;
  EXPECT_GT(simulate(C, constant(2e-3)).QueueWait.Mean, 0.07456 * 1.03);
}

TEST(Simulator, LittlesLawAndConservation) {
  Config C;
  C.Replicas = 3;
  C.MaxSequences = 8;
  C.MaxBatchedTokens = 512;
  C.ArrivalRate = 40;
  C.Prompt = {Length::Kind::Uniform, 64, 1024};
  C.Output = {Length::Kind::Lognormal, 64, 1};
  C.Requests = 20000;
  C.Route = Routing::LeastOutstanding;
  // An iteration costs 2 ms plus 20 us a new token.
  Result R =
      simulate(C, [](const StepShape &S) { return 2e-3 + 20e-6 * S.Tokens; });
  EXPECT_EQ(R.Arrived, 20000u);
  EXPECT_EQ(R.Completed + R.Rejected, R.Arrived);
  EXPECT_EQ(R.Rejected, 0u);
  // L = lambda W over the run: the time-average number in the system is
  // the completions a second times the mean time in the system.
  EXPECT_NEAR(R.MeanInSystem, R.ArrivalRateSeen * R.E2E.Mean,
              1e-9 * R.MeanInSystem);
  // Every output token is counted once: the first tokens (one a request)
  // and the decodes' gaps.
  EXPECT_EQ(R.OutputTokens, R.TTFT.Count + R.ITL.Count);
  EXPECT_EQ(R.TTFT.Count, R.Completed);
}

TEST(Simulator, SameSeedSameBytes) {
  Config C = mg1(8, 20, 5000);
  C.Replicas = 2;
  C.MaxSequences = 4;
  C.MaxBatchedTokens = 64;
  Result A = simulate(C, constant(1e-3)), B = simulate(C, constant(1e-3));
  EXPECT_EQ(A.E2E.Mean, B.E2E.Mean);
  EXPECT_EQ(A.TTFT.P99, B.TTFT.P99);
  EXPECT_EQ(A.Makespan, B.Makespan);
  C.Seed = 8;
  EXPECT_NE(simulate(C, constant(1e-3)).E2E.Mean, A.E2E.Mean);
}

TEST(Simulator, RequestsTooLargeForTheCacheAreRejected) {
  Config C = mg1(5, 1, 1000);
  C.Prompt = {Length::Kind::Uniform, 1, 100};
  C.Output = {Length::Kind::Fixed, 10, 0};
  C.MaxBatchedTokens = 128;
  C.KVCapacityTokens = 60; // prompts above 50 tokens never fit
  Result R = simulate(C, constant(1e-3));
  EXPECT_EQ(R.Completed + R.Rejected, 1000u);
  EXPECT_NEAR(static_cast<double>(R.Rejected) / 1000, 0.5, 0.05);
}

TEST(Simulator, PreemptsTheNewestWhenTheCacheRunsOut) {
  // A cache of 200 tokens; requests of 20 prompt and 30 output tokens are
  // admitted on their prompts (8 slots x 20 = 160), then grow by a token
  // an iteration: at 50 tokens each only 4 fit, so the newest are
  // preempted and run their prompt and output so far again later.
  Config C = mg1(200, 1, 2000);
  C.MaxSequences = 8;
  C.MaxBatchedTokens = 64;
  C.Prompt = {Length::Kind::Fixed, 20, 0};
  C.Output = {Length::Kind::Fixed, 30, 0};
  C.KVCapacityTokens = 200;
  Result R = simulate(C, constant(1e-3));
  EXPECT_GT(R.Preemptions, 0u);
  EXPECT_LE(R.PeakKVTokens, 200);
  EXPECT_EQ(R.Completed, 2000u);
  // Every output token once, the recomputed ones included.
  EXPECT_EQ(R.OutputTokens, 2000u * 30);
  EXPECT_EQ(R.OutputTokens, R.TTFT.Count + R.ITL.Count);
  // Without the limit nothing is preempted.
  C.KVCapacityTokens = 0;
  EXPECT_EQ(simulate(C, constant(1e-3)).Preemptions, 0u);
}

TEST(Simulator, InvariantsHoldUnderPreemptionWithVariedLengths) {
  // Lengths that vary widely over a small cache: requests complete, are
  // preempted and their slots reused in every order. Whatever the router,
  // every request completes or is rejected, every output token is counted
  // once, each request's wait is counted once, and the cache never
  // overflows (a reused slot once matched its earlier request's stale
  // entries).
  for (Routing Route :
       {Routing::RoundRobin, Routing::LeastOutstanding, Routing::SharedQueue})
    for (unsigned Replicas : {1u, 3u}) {
      Config C;
      C.Replicas = Replicas;
      C.MaxSequences = 16;
      C.MaxBatchedTokens = 256;
      C.KVCapacityTokens = 600;
      C.ArrivalRate = 30.0 * Replicas;
      C.Prompt = {Length::Kind::Lognormal, 60, 2};
      C.Output = {Length::Kind::Lognormal, 40, 2};
      C.Requests = 3000;
      C.Route = Route;
      Result R = simulate(
          C, [](const StepShape &S) { return 1e-3 + 5e-6 * S.Tokens; });
      SCOPED_TRACE(testing::Message()
                   << routingName(Route, true) << " x " << Replicas);
      EXPECT_GT(R.Preemptions, 0u);
      EXPECT_EQ(R.Completed + R.Rejected, R.Arrived);
      EXPECT_EQ(R.Arrived, 3000u);
      EXPECT_EQ(R.TTFT.Count, R.Completed);
      EXPECT_EQ(R.E2E.Count, R.Completed);
      EXPECT_EQ(R.QueueWait.Count, R.Completed);
      EXPECT_EQ(R.OutputTokens, R.TTFT.Count + R.ITL.Count);
      EXPECT_LE(R.PeakKVTokens, 600);
    }
}

TEST(Simulator, RefusesConfigurationsItCannotRun) {
  Config C = mg1(5, 10, 10);
  C.MaxSequences = 4;
  C.MaxBatchedTokens = 2; // cannot hold 4 decode tokens
  EXPECT_THROW(simulate(C, constant(1e-3)), std::invalid_argument);
  C = mg1(0, 10, 10);
  EXPECT_THROW(simulate(C, constant(1e-3)), std::invalid_argument);
}

TEST(Simulator, HistogramQuantilesWithinHalfABin) {
  Histogram H;
  for (int I = 1; I <= 100000; ++I)
    H.add(I * 1e-5); // 10 us to 1 s, uniform
  EXPECT_NEAR(H.quantile(0.5) / 0.5, 1, 0.006);
  EXPECT_NEAR(H.quantile(0.99) / 0.99, 1, 0.006);
  EXPECT_NEAR(H.mean(), 0.500005, 1e-9);
}

/// The step model of a compiled scenario drives the simulator: a request
/// alone takes its prefill, by the same code the graph's TTFT uses, and
/// then its decode steps, context growing one token each.
TEST(Simulator, OneRequestAloneTakesTheStepModelsTimes) {
  auto Comp = test::compileText(test::SmallDecoderScenario, "t.mls");
  ASSERT_TRUE(Comp);
  Evaluator E(Comp->Graphs[0]);
  E.run();
  std::optional<StepModel> M = StepModel::of(E);
  ASSERT_TRUE(M);
  Config C = mg1(1, 1, 1);
  C.MaxBatchedTokens = 2048;
  C.Prompt = {Length::Kind::Fixed, 1000, 0};
  C.Output = {Length::Kind::Fixed, 5, 0};
  Result R = simulate(C, [&](const StepShape &S) { return M->shape(S).Time; });
  double Prefill = M->time(1, 0, 1000);
  double Decodes = 0;
  for (int K = 0; K < 4; ++K)
    Decodes += M->time(1, 1000 + K, 1);
  // Equal but for the rounding of differences of clock readings.
  EXPECT_NEAR(R.TTFT.Mean, Prefill, 1e-12);
  EXPECT_NEAR(R.E2E.Mean, Prefill + Decodes, 1e-12);
  EXPECT_NEAR(R.TPOT.Mean, Decodes / 4, 1e-12);
}

} // namespace
