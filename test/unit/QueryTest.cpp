//===- QueryTest.cpp - Sweeps and Pareto fronts, a block at a time --------===//
//
// A sweep is evaluated a block of points at a time and kept incrementally
// (runtime/Query.h): the rows must not depend on the block size, the
// thread count, or whether they were streamed; `top` with `sort_by` keeps
// the best N in a heap, which must give what sorting every row and
// cutting gives; a Pareto front merged block by block must be the front
// of all points. Points where a computed field leaves its domain are
// never kept, and are counted.
//
//===----------------------------------------------------------------------===//

#include "runtime/Query.h"
#include "passes/Pipeline.h"
#include "runtime/Binding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mlsc;

namespace {

const char *const Scenario = R"(
accelerator gpu { hbm.capacity = 80 GB; hbm.bandwidth = 2 TB/s; tdp = 700 W
                  peak.bf16 = 1000 TFLOP/s }
precision bf16 { bytes = 2 B }
model m { params = 10e9; layers = 10; heads = 8; head_dim = 64; kv_heads = 8 }
workload w : inference { model = m; precision = bf16; prompt = 1000 tok
                         output = 200 tok; batch = 5 }
workload v : inference { model = m; precision = bf16; prompt = 1000 tok
                         output = 200 tok; batch = w.batch - 3 }
scenario s { workload = w; system = gpu }
scenario t { workload = v; system = gpu }
sweep all { scenario = s
  vary { w.batch in 1 .. 40 step 1; w.prompt in 100 tok .. 2000 tok step 100 tok }
  report { throughput; decode_step_time }
  where { decode_step_time < 13.7 ms } }
sweep best { scenario = s
  vary { w.batch in 1 .. 40 step 1; w.prompt in 100 tok .. 2000 tok step 100 tok }
  report { throughput; decode_step_time }
  sort_by { -throughput }
  top = 17 }
sweep ties { scenario = s
  vary { w.batch in [4, 4, 4, 2, 2, 8]; w.output in [10 tok, 20 tok] }
  report { decode_step_time }
  sort_by { decode_step_time }
  top = 5 }
workload busy : inference { model = m; precision = bf16; prompt = 1000 tok
                            output = 200 tok; batch = 16; arrival = 4 req/s }
scenario loaded { workload = busy; system = gpu }
sweep served { scenario = loaded
  vary { busy.batch in 1 .. 24 step 1; busy.arrival in 1 req/s .. 40 req/s step 3 req/s }
  report { ttft.p99; latency.p99; energy_per_token }
  where { ttft.p99 < 400 ms } }
sweep derived { scenario = t
  vary { w.batch in 1 .. 10 step 1 }
  report { throughput } }
solve front { scenario = s
  vary { w.batch in 1 .. 40 step 1; w.prompt in 100 tok .. 2000 tok step 100 tok }
  minimize { decode_step_time; energy_per_token } }
)";

std::unique_ptr<Compilation> build() {
  auto C = std::make_unique<Compilation>();
  C->Options.LoadPrelude = false;
  C->Options.DataDir = MLSC_SOURCE_DIR;
  EXPECT_TRUE(
      compile(*C, llvm::MemoryBuffer::getMemBufferCopy(Scenario, "t.mls")));
  return C;
}

const query::Query &queryNamed(const Compilation &C, const char *Name) {
  for (const query::Query &Q : C.Queries)
    if (Q.Name == Name)
      return Q;
  ADD_FAILURE() << "no query " << Name;
  return C.Queries.front();
}

/// Rows equal bit for bit, in the same order.
void expectSameRows(const std::vector<GridRow> &A,
                    const std::vector<GridRow> &B) {
  ASSERT_EQ(A.size(), B.size());
  for (size_t I = 0; I < A.size(); ++I) {
    EXPECT_EQ(A[I].Point, B[I].Point) << "row " << I;
    ASSERT_EQ(A[I].Vars, B[I].Vars) << "row " << I;
    ASSERT_EQ(A[I].Values.size(), B[I].Values.size());
    for (size_t K = 0; K < A[I].Values.size(); ++K)
      EXPECT_EQ(std::memcmp(&A[I].Values[K], &B[I].Values[K], sizeof(double)),
                0)
          << "row " << I << " column " << K;
    EXPECT_EQ(A[I].Binding, B[I].Binding);
  }
}

TEST(Query, SweepRowsDoNotDependOnBlockSizeThreadsOrStreaming) {
  auto C = build();
  const query::Query &Q = queryNamed(*C, "all");
  Evaluator E(C->Graphs[Q.Graph]);
  GridResult Whole = runSweep(E, Q, 1);
  EXPECT_EQ(Whole.Points, 800u);
  // The filter keeps some points and drops others.
  EXPECT_GT(Whole.Kept, 0u);
  EXPECT_LT(Whole.Kept, Whole.Points);
  EXPECT_EQ(Whole.Rows.size(), Whole.Kept);
  for (size_t Block : {1, 7, 64, 1000})
    for (unsigned Threads : {1u, 2u}) {
      GridResult R = runSweep(E, Q, Threads, nullptr, nullptr, Block);
      EXPECT_EQ(R.Points, Whole.Points);
      EXPECT_EQ(R.Kept, Whole.Kept);
      expectSameRows(R.Rows, Whole.Rows);
      // Streamed: nothing is kept, and the sink sees the same rows.
      std::vector<GridRow> Seen;
      size_t Calls = 0;
      GridResult S = runSweep(
          E, Q, Threads, nullptr,
          [&](llvm::ArrayRef<GridRow> Rows) {
            ++Calls;
            Seen.insert(Seen.end(), Rows.begin(), Rows.end());
          },
          Block);
      EXPECT_TRUE(S.Streamed);
      EXPECT_TRUE(S.Rows.empty());
      EXPECT_EQ(S.Kept, Whole.Kept);
      if (Block == 7) {
        EXPECT_GT(Calls, 1u);
      }
      expectSameRows(Seen, Whole.Rows);
    }
}

// A sweep recomputes only what its rows read (the reported terms, the
// conditions, feasibility, domain checks, the binding wall's times): each
// row must equal a full evaluation of its point, bit for bit, and the
// points kept those whose conditions hold there.
TEST(Query, SweepRowsEqualAFullEvaluationOfTheirPoint) {
  auto C = build();
  const query::Query &Q = queryNamed(*C, "served");
  Evaluator Base(C->Graphs[Q.Graph]);
  GridResult R = runSweep(Base, Q, 1);
  EXPECT_EQ(R.Points, 24u * 14u);
  size_t Kept = 0;
  for (size_t I = 0; I < R.Points; ++I) {
    std::vector<double> Vars = {Q.Vars[0].Values[I / 14],
                                Q.Vars[1].Values[I % 14]};
    Evaluator E = Base;
    evaluateAt(E, Q, Vars);
    Kept += E.value(Q.Conditions.front().Node) != 0;
  }
  EXPECT_EQ(R.Kept, Kept);
  // Some points are kept and some not, so the check can fail both ways.
  EXPECT_GT(Kept, 0u);
  EXPECT_LT(Kept, R.Points);
  ASSERT_EQ(R.Rows.size(), Kept);
  for (const GridRow &Row : R.Rows) {
    Evaluator E = Base;
    evaluateAt(E, Q, Row.Vars);
    for (size_t K = 0; K < Q.Report.size(); ++K) {
      double Full = E.value(Q.Report[K].Node);
      EXPECT_EQ(std::memcmp(&Full, &Row.Values[K], sizeof(double)), 0)
          << "point " << Row.Point << " column " << K << ": " << Full << " vs "
          << Row.Values[K];
    }
    EXPECT_EQ(Row.Binding, bindingWall(E).Number) << "point " << Row.Point;
  }
}

TEST(Query, TopWithSortKeepsTheBestRowsAsAFullSortWould) {
  auto C = build();
  const query::Query &Q = queryNamed(*C, "best");
  Evaluator E(C->Graphs[Q.Graph]);
  GridResult Heap = runSweep(E, Q, 1, nullptr, nullptr, 5);
  // By hand: every row, sorted by throughput descending (ties in grid
  // order), cut to 17.
  query::Query Every = Q;
  Every.Top = 0;
  Every.SortBy.clear();
  GridResult All = runSweep(E, Every, 1);
  ASSERT_EQ(All.Rows.size(), 800u);
  std::stable_sort(All.Rows.begin(), All.Rows.end(),
                   [](const GridRow &A, const GridRow &B) {
                     return A.Values[0] > B.Values[0];
                   });
  All.Rows.resize(17);
  EXPECT_EQ(Heap.Kept, 800u);
  expectSameRows(Heap.Rows, All.Rows);
  // A sink does not stream a sorted sweep: the rows come back whole.
  GridResult S = runSweep(
      E, Q, 2, nullptr, [](llvm::ArrayRef<GridRow>) { FAIL(); }, 3);
  EXPECT_FALSE(S.Streamed);
  expectSameRows(S.Rows, All.Rows);
}

TEST(Query, TiesKeepGridOrderWhateverTheBlocks) {
  auto C = build();
  const query::Query &Q = queryNamed(*C, "ties");
  Evaluator E(C->Graphs[Q.Graph]);
  GridResult One = runSweep(E, Q, 1, nullptr, nullptr, 1);
  GridResult Big = runSweep(E, Q, 1);
  expectSameRows(One.Rows, Big.Rows);
  // Batch 2 is fastest: grid points 6..9 (batch 2 twice, output 10 and 20
  // tokens), then the first batch-4 point, in grid order.
  ASSERT_EQ(One.Rows.size(), 5u);
  std::vector<size_t> Points;
  for (const GridRow &R : One.Rows)
    Points.push_back(R.Point);
  EXPECT_EQ(Points, (std::vector<size_t>{6, 8, 7, 9, 0}));
}

TEST(Query, ParetoFrontMergedByBlocksIsTheFrontOfAllPoints) {
  auto C = build();
  const query::Query &Q = queryNamed(*C, "front");
  Evaluator E(C->Graphs[Q.Graph]);
  GridResult Whole = paretoFront(E, Q, 1);
  EXPECT_EQ(Whole.Points, 800u);
  ASSERT_GT(Whole.Rows.size(), 1u);
  // No kept point is beaten in both objectives by another kept one.
  for (const GridRow &A : Whole.Rows)
    for (const GridRow &B : Whole.Rows)
      EXPECT_FALSE(B.Values[0] < A.Values[0] && B.Values[1] < A.Values[1]);
  for (size_t Block : {1, 3, 50, 799})
    for (unsigned Threads : {1u, 2u}) {
      GridResult R = paretoFront(E, Q, Threads, Block);
      EXPECT_EQ(R.Kept, Whole.Kept);
      expectSameRows(R.Rows, Whole.Rows);
    }
}

TEST(Query, PointsOutsideAComputedFieldsDomainAreCountedNeverKept) {
  auto C = build();
  const query::Query &Q = queryNamed(*C, "derived");
  const graph::Graph &G = C->Graphs[Q.Graph];
  // v.batch's own check, and the layout's (heads / tp, kv_heads / tp,
  // layers - pp, devices - tp x pp x ep), which hold at every point here.
  ASSERT_EQ(llvm::count_if(G.DomainChecks,
                           [](const graph::DomainCheck &D) {
                             return D.Field == "v.batch";
                           }),
            1);
  EXPECT_EQ(G.DomainChecks.size(), 5u);
  Evaluator E(G);
  // v.batch = w.batch - 3: w.batch 1..3 give -2, -1 and 0.
  GridResult R = runSweep(E, Q, 1, nullptr, nullptr, 2);
  EXPECT_EQ(R.Points, 10u);
  EXPECT_EQ(R.Invalid, 3u);
  EXPECT_EQ(R.Kept, 7u);
  ASSERT_EQ(R.Rows.size(), 7u);
  EXPECT_EQ(R.Rows.front().Vars, std::vector<double>{4});
  EXPECT_EQ(R.FirstInvalidVars, std::vector<double>{1});
  EXPECT_EQ(R.FirstInvalidReason,
            "`v.batch` is -2; it must be a whole number from 1 to 2^53");
}

} // namespace
