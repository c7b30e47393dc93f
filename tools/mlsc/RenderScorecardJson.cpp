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
    if (C.Route == sim::Routing::Weighted)
      J.attributeObject("weights", [&] {
        number(J, "prefix", C.Weights.Prefix);
        number(J, "queue", C.Weights.Queue);
        number(J, "kv", C.Weights.KV);
      });
    J.attribute("replicas", static_cast<int64_t>(C.Replicas));
    J.attribute("slots", static_cast<int64_t>(C.MaxSequences));
    number(J, "max_batched_tokens", C.MaxBatchedTokens);
    if (C.PromptChunk > 0)
      number(J, "prompt_chunk", C.PromptChunk);
    number(J, "kv_capacity_tokens", C.KVCapacityTokens);
    if (C.PipelineStages > 1)
      J.attribute("pipeline_stages", static_cast<int64_t>(C.PipelineStages));
    statsJSON(J, "ttft", S.TTFT);
    statsJSON(J, "tpot", S.TPOT);
    statsJSON(J, "itl", S.ITL);
    statsJSON(J, "latency", S.E2E);
    statsJSON(J, "queue_wait", S.QueueWait);
    J.attribute("completed", static_cast<int64_t>(S.Completed));
    J.attribute("rejected", static_cast<int64_t>(S.Rejected));
    J.attribute("rejected_context", static_cast<int64_t>(S.RejectedContext));
    J.attribute("preemptions", static_cast<int64_t>(S.Preemptions));
    number(J, "peak_kv_tokens", S.PeakKVTokens);
    J.attribute("iterations", static_cast<int64_t>(S.Iterations));
    number(J, "mean_batch", S.MeanBatch);
    number(J, "output_tokens_per_s", S.Throughput);
    number(J, "makespan_s", S.Makespan);
    static const char *const ArrivalNames[] = {"poisson", "gamma", "on_off",
                                               "diurnal", "closed"};
    J.attributeObject("arrivals", [&] {
      const sim::Arrivals &A = C.Arrive;
      if (C.Replay) {
        J.attribute("process", "trace");
        J.attribute("trace", C.ReplayName);
        number(J, "span_s",
               (*C.Replay)[C.Requests - 1].Arrival - C.Replay->front().Arrival);
        return;
      }
      J.attribute("process", ArrivalNames[static_cast<int>(A.K)]);
      number(J, "mean_rate_req_per_s", C.ArrivalRate);
      if (A.K == sim::Arrivals::Kind::Gamma)
        number(J, "cv", A.CV);
      if (A.K == sim::Arrivals::Kind::OnOff) {
        number(J, "burst_s", A.On);
        number(J, "silence_s", A.Off);
      }
      if (A.K == sim::Arrivals::Kind::Diurnal) {
        number(J, "amplitude", A.Amplitude);
        number(J, "period_s", A.Period);
      }
      if (A.K == sim::Arrivals::Kind::Closed) {
        J.attribute("users", static_cast<int64_t>(A.Users));
        number(J, "think_s", A.Think);
      }
    });
    J.attribute("shed", static_cast<int64_t>(S.Shed));
    J.attribute("preemption",
                C.Preempt == sim::Preemption::Swap ? "swap" : "recompute");
    if (C.Preempt == sim::Preemption::Swap) {
      number(J, "swap_space_tokens", C.SwapTokens);
      number(J, "swap_bandwidth_b_per_s", C.SwapBandwidth);
      J.attribute("swap_outs", static_cast<int64_t>(S.SwapOuts));
      J.attribute("swap_ins", static_cast<int64_t>(S.SwapIns));
    }
    if (const std::optional<sim::LinearStep> &L = R.Simulated->Linear)
      J.attributeObject("linear_step", [&] {
        number(J, "fixed_s", L->Fixed);
        number(J, "prefill_s_per_tok", L->Prefill);
        number(J, "decode_s_per_tok", L->Decode);
        number(J, "kv_s_per_tok", L->KV);
      });
    if (C.Batch.Window > 0)
      J.attributeObject("batcher", [&] {
        number(J, "window_s", C.Batch.Window);
        J.attribute("max_requests", static_cast<int64_t>(C.Batch.MaxRequests));
      });
    if (C.Admit.Rate > 0 || C.Admit.ShedPriority >= 0)
      J.attributeObject("admission", [&] {
        number(J, "rate_req_per_s", C.Admit.Rate);
        number(J, "burst", C.Admit.Burst);
        J.attribute("shed_priority",
                    static_cast<int64_t>(C.Admit.ShedPriority));
        number(J, "shed_queue", C.Admit.ShedQueue);
      });
    if (!C.Tiers.empty()) {
      J.attributeArray("kv_tiers", [&] {
        for (size_t T = 0; T < C.Tiers.size(); ++T)
          J.object([&] {
            J.attribute("name", C.Tiers[T].Name);
            number(J, "capacity_tokens", C.Tiers[T].CapacityTokens);
            number(J, "bandwidth_b_per_s", C.Tiers[T].Bandwidth);
            number(J, "latency_s", C.Tiers[T].Latency);
            J.attribute("shared", C.Tiers[T].Shared);
            number(J, "hit_tokens",
                   T < S.TierHitTokens.size() ? S.TierHitTokens[T] : 0);
          });
      });
      J.attribute("kv_loads", static_cast<int64_t>(S.Loads));
      statsJSON(J, "kv_load", S.Load);
    }
    // The pool's autoscaler, and the prefill pool's.
    auto autoscaling = [&](const char *Name, const sim::Autoscaling &A,
                           bool Prefill, uint64_t Ups, uint64_t Downs,
                           double Mean, double Peak) {
      if (!A.Enabled)
        return;
      J.attributeObject(Name, [&] {
        J.attribute("min", static_cast<int64_t>(A.Min));
        J.attribute("max", static_cast<int64_t>(A.Max));
        J.attribute("signal", A.On == sim::Autoscaling::Signal::Queue
                                  ? "queue"
                                  : "utilisation");
        number(J, "up", A.Up);
        number(J, "down", A.Down);
        number(J, "startup_s", A.StartUp);
        number(J, "cooldown_s", A.Cooldown);
        number(J, "interval_s", A.Interval);
        J.attribute("scale_ups", static_cast<int64_t>(Ups));
        J.attribute("scale_downs", static_cast<int64_t>(Downs));
        number(J, "mean_replicas", Mean);
        number(J, "peak_replicas", Peak);
        // Each decision: [time s, serving, starting, signal].
        J.attributeArray("timeline", [&] {
          for (const sim::Result::Sample &X : S.Timeline)
            if (X.Prefill == Prefill)
              J.array([&] {
                J.value(X.Time);
                J.value(static_cast<int64_t>(X.Serving));
                J.value(static_cast<int64_t>(X.Starting));
                J.value(X.Signal);
              });
        });
      });
    };
    autoscaling("autoscaling", C.Scale, false, S.ScaleUps, S.ScaleDowns,
                S.MeanReplicas, S.PeakReplicas);
    autoscaling("prefill_autoscaling", C.PrefillScale, true, S.PrefillScaleUps,
                S.PrefillScaleDowns, S.MeanPrefillReplicas,
                S.PeakPrefillReplicas);
    if (C.SampleEvery > 0)
      J.attributeObject("replica_samples", [&] {
        number(J, "every_s", C.SampleEvery);
        J.attribute("truncated", S.ReplicasTruncated);
        // Each sample: [time s, replica, busy share, running, waiting, KV
        // in use]; prefill replicas follow the decode pool's.
        J.attributeArray("rows", [&] {
          for (const sim::Result::ReplicaSample &X : S.Replicas)
            J.array([&] {
              J.value(X.Time);
              J.value(static_cast<int64_t>(X.Replica));
              J.value(X.Busy);
              J.value(static_cast<int64_t>(X.Running));
              J.value(static_cast<int64_t>(X.Waiting));
              J.value(X.KV);
            });
        });
      });
    J.attribute("with_targets", static_cast<int64_t>(S.WithTargets));
    J.attribute("met_targets", static_cast<int64_t>(S.MetTargets));
    number(J, "goodput_req_per_s", S.Goodput);
    number(J, "utilisation", S.Utilisation);
    number(J, "kv_utilisation", S.KVUtilisation);
    if (C.Prefix.Groups) {
      J.attributeObject("prefixes", [&] {
        J.attribute("groups", static_cast<int64_t>(C.Prefix.Groups));
        J.attribute("tokens", static_cast<int64_t>(C.Prefix.Tokens));
        number(J, "share", C.Prefix.Share);
        J.attribute("caching", C.PrefixCaching);
        number(J, "hit_rate", S.PrefixHitRate);
      });
    }
    if (C.Session.Open) {
      J.attributeObject("sessions", [&] {
        J.attribute("open", static_cast<int64_t>(C.Session.Open));
        number(J, "reuse", C.Session.Reuse);
        J.attribute("caching", C.PrefixCaching);
        J.attribute("conversations", static_cast<int64_t>(S.Conversations));
        J.attribute("follow_ups", static_cast<int64_t>(S.FollowUps));
        number(J, "hit_rate", S.PrefixHitRate);
      });
    }
    if (C.Disagg.PrefillReplicas) {
      J.attributeObject("disaggregation", [&] {
        J.attribute("prefill_replicas",
                    static_cast<int64_t>(C.Disagg.PrefillReplicas));
        number(J, "kv_bytes_per_token", C.Disagg.BytesPerToken);
        number(J, "link_bandwidth_b_per_s", C.Disagg.Bandwidth);
        number(J, "link_latency_s", C.Disagg.Latency);
        J.attribute("local_below", static_cast<int64_t>(C.Disagg.LocalBelow));
        J.attribute("transfers", static_cast<int64_t>(S.Transfers));
        J.attribute("local_prefills", static_cast<int64_t>(S.LocalPrefills));
        statsJSON(J, "transfer", S.Transfer);
      });
    }
    if (!C.Classes.empty()) {
      J.attributeArray("classes", [&] {
        for (size_t I = 0; I < S.Classes.size(); ++I) {
          const sim::ClassResult &K = S.Classes[I];
          const sim::RequestClass &RC = C.Classes[I];
          J.object([&] {
            J.attribute("name", K.Name);
            number(J, "share", RC.Share);
            J.attribute("priority", static_cast<int64_t>(RC.Priority));
            if (RC.TTFTTarget > 0)
              number(J, "ttft_target_s", RC.TTFTTarget);
            if (RC.TPOTTarget > 0)
              number(J, "tpot_target_s", RC.TPOTTarget);
            J.attribute("completed", static_cast<int64_t>(K.Completed));
            J.attribute("rejected", static_cast<int64_t>(K.Rejected));
            J.attribute("shed", static_cast<int64_t>(K.Shed));
            J.attribute("met_targets", static_cast<int64_t>(K.MetTargets));
            number(J, "goodput_req_per_s", K.Goodput);
            statsJSON(J, "ttft", K.TTFT);
            statsJSON(J, "tpot", K.TPOT);
            statsJSON(J, "latency", K.E2E);
          });
        }
      });
    }
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
                M::DraftWeightsPerDevice, M::GradientsPerDevice,
                M::OptimizerPerDevice, M::KVCachePerDevice,
                M::ActivationsPerDevice, M::RuntimeReserve,
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
        if (R.has(M::ContextFits))
          J.attribute("context_fits", R[M::ContextFits] != 0);
        // The share refused under a prompt spread, whether or not the
        // scenario fits (performance.metrics is written only when it does).
        if (R.has(M::ContextRefused))
          number(J, "context_refused", R[M::ContextRefused]);
      });
    }
    J.attributeObject("performance", [&] {
      if (R.Binding && R.Feasible) {
        J.attribute("status", R.Performance);
        // An arrival rate at or beyond what the slots serve: the waits
        // grow without bound and the latency percentiles are +inf.
        if (R.has(M::QueueStable))
          J.attribute("queue", R[M::QueueStable] != 0 ? "STABLE" : "UNSTABLE");
        if (std::string Why = queueSaturation(R); !Why.empty())
          J.attribute("queue_reason", Why);
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
      } else if (R.Kind == ResultKind::DecoderTraining && !R.has(M::StepTime)) {
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
