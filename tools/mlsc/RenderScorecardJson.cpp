//===- ScorecardJson.cpp - The scorecard of `mlsc eval` as JSON -----------===//
//
// Renders a ScenarioResult (runtime/Result.h) as the JSON object of one
// scenario (docs/json-output.md), streamed. Reads only the result model.
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Json.h"
#include "tools/mlsc/Render.h"

#include <cmath>

namespace mlsc::driver {

namespace {

using M = MetricId;

void quantity(llvm::json::OStream &J, llvm::StringRef Key, const Quantity &Q) {
  J.attributeBegin(Key);
  driver::quantity(J, Q.SI, Q.Dim, Q.IsBool);
  J.attributeEnd();
}

const char *verdictLower(Verdict V) {
  return V == Verdict::Pass ? "pass" : V == Verdict::Fail ? "fail" : "unknown";
}

} // namespace

void statsJSON(llvm::json::OStream &J, llvm::StringRef Key,
               const sim::Stats &S) {
  J.attributeObject(Key, [&] {
    J.attribute("count", static_cast<int64_t>(S.Count));
    number(J, "mean", S.Mean);
    number(J, "p50", S.P50);
    number(J, "p90", S.P90);
    number(J, "p99", S.P99);
    number(J, "p999", S.P999);
  });
}

void simulatedJSON(const ScenarioResult &R, llvm::json::OStream &J) {
  J.attributeObject("simulated", [&] {
    if (!R.Simulated) {
      J.attribute("run", false);
      J.attribute("why", R.NotSimulated);
      return;
    }
    const sim::Config &C = R.Simulated->Cfg;
    const sim::Result &S = R.Simulated->R;
    J.attribute("run", true);
    J.attribute("requests", static_cast<int64_t>(C.Requests));
    J.attribute("seed", static_cast<int64_t>(C.Seed));
    J.attribute("router", sim::routingName(C.Route, true));
    J.attribute("replicas", static_cast<int64_t>(C.Replicas));
    J.attribute("slots", static_cast<int64_t>(C.MaxSequences));
    number(J, "max_batched_tokens", C.MaxBatchedTokens);
    number(J, "kv_capacity_tokens", C.KVCapacityTokens);
    statsJSON(J, "ttft", S.TTFT);
    statsJSON(J, "tpot", S.TPOT);
    statsJSON(J, "itl", S.ITL);
    statsJSON(J, "latency", S.E2E);
    statsJSON(J, "queue_wait", S.QueueWait);
    J.attribute("completed", static_cast<int64_t>(S.Completed));
    J.attribute("rejected", static_cast<int64_t>(S.Rejected));
    J.attribute("preemptions", static_cast<int64_t>(S.Preemptions));
    number(J, "peak_kv_tokens", S.PeakKVTokens);
    J.attribute("iterations", static_cast<int64_t>(S.Iterations));
    number(J, "mean_batch", S.MeanBatch);
    number(J, "output_tokens_per_s", S.Throughput);
    number(J, "makespan_s", S.Makespan);
  });
}

void scorecardJSON(const ScenarioResult &R, llvm::json::OStream &J) {
  J.object([&] {
    J.attribute("scenario", R.Scenario);
    J.attribute("mode", R.Training ? "training" : "inference");
    if (R.has(M::Feasible)) {
      J.attributeObject("feasibility", [&] {
        J.attribute("status", R.Feasible ? "PASS" : "FAIL");
        quantity(J, "memory_per_device", R.get(M::MemoryPerDevice));
        quantity(J, "device_memory", R.get(M::DeviceMemory));
        J.attribute("memory_fits", R[M::MemoryFits] != 0);
        // What fills the memory (a decoder's parts; a batch model's state).
        J.attributeObject("memory_parts", [&] {
          for (MetricId Part :
               {M::WeightsPerDevice, M::ResidentWeightsPerDevice,
                M::GradientsPerDevice, M::OptimizerPerDevice,
                M::KVCachePerDevice, M::ActivationsPerDevice, M::RuntimeReserve,
                M::TrainingStatePerDevice})
            if (R.has(Part))
              quantity(J, metricInfo(Part).Name, R.get(Part));
        });
        if (R.has(M::ParallelismFits))
          J.attribute("parallelism_fits", R[M::ParallelismFits] != 0);
        if (R.has(M::BatchFits)) {
          number(J, "max_concurrent_sequences", R[M::MaxConcurrentSequences]);
          J.attribute("batch_fits", R[M::BatchFits] != 0);
        }
      });
    }
    J.attributeObject("performance", [&] {
      if (R.Binding && R.Feasible) {
        J.attribute("status", R.Performance);
        // An arrival rate at or beyond what the slots serve: the waits
        // grow without bound and the latency percentiles are +inf.
        if (R.has(M::QueueStable))
          J.attribute("queue", R[M::QueueStable] != 0 ? "STABLE" : "UNSTABLE");
        J.attributeObject("metrics", [&] {
          for (MetricId Id : R.Public)
            quantity(J, metricInfo(Id).Name, R.get(Id));
        });
        const BindingWall &D = *R.Binding;
        J.attributeObject("binding_wall", [&] {
          J.attribute("wall", D.Short);
          J.attribute("number", static_cast<int64_t>(D.Number));
          J.attribute("phase", phaseInfo(D.Phase).Prefix);
          number(J, "margin", D.Margin);
          if (D.Number == 2 && D.Phase == PhaseId::Decode &&
              R.has(M::DecodeCrossoverBatch)) {
            double BStar = R[M::DecodeCrossoverBatch];
            if (std::isfinite(BStar))
              number(J, "crossover_batch", BStar);
            else
              J.attribute("crossover_batch", nullptr);
          }
        });
      } else if (R.Kind == ResultKind::DecoderTraining && !R.Missing.empty()) {
        // Evaluated in part: what the lowered walls compute, and what not.
        J.attribute("status", R.Performance);
        J.attribute("reason", R.Missing.front().What + " are not evaluated: " +
                                  R.Missing.front().Why);
        J.attributeObject("metrics", [&] {
          for (MetricId Id : R.Public)
            quantity(J, metricInfo(Id).Name, R.get(Id));
        });
      } else {
        J.attribute("status", "NOT_EVALUATED");
        J.attribute("reason", "infeasible");
      }
    });
    if (R.HasSimulate)
      simulatedJSON(R, J);
    J.attributeArray("conditions", [&] {
      for (const ConditionResult &C : R.Conditions)
        J.object([&] {
          J.attribute("kind", C.IsAssert ? "assert" : "sla");
          J.attribute("text", C.Text);
          J.attribute("location", C.Location);
          J.attribute("verdict", verdictLower(C.V));
          if (!C.Message.empty())
            J.attribute("message", C.Message);
          if (!C.Computed)
            J.attribute("missing_metric", C.Missing);
        });
    });
    J.attributeArray("unavailable_metrics", [&] {
      for (MetricId Id : R.Unavailable)
        J.value(metricInfo(Id).Name);
    });
  });
}

} // namespace mlsc::driver
