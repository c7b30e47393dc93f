//===- Metrics.h - The graph contract: metrics and phases --------*- C++
//-*-===//
//
// The values lowering publishes in a scenario graph and the tool reads back
// (Metrics.def): each with its name, dimension, wall and role. Lowering
// publishes a node as a metric only when its dimension is the metric's;
// readers ask for metrics by id, and asking a graph for a metric it lacks
// is an error at that point (Graph::get), never a silent node 0 or NaN.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_IR_METRICS_H
#define MLSC_IR_METRICS_H

#include "ir/Dimension.h"
#include "ir/Walls.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlsc {

enum class MetricId : uint16_t {
#define METRIC(Id, ...) Id,
#include "ir/Metrics.def"
};
enum class PhaseId : uint8_t {
#define PHASE(Id, ...) Id,
#include "ir/Metrics.def"
};
enum class PhaseMetricId : uint8_t {
#define PHASE_METRIC(Id, ...) Id,
#include "ir/Metrics.def"
};

/// Part of the language, or read by the tool only.
enum class Visibility : uint8_t { Public, Internal };
/// Which workloads compute a metric (Metrics.def).
enum class Applies : uint8_t {
  Tokens,
  TokensOnInput,
  Samples,
  Training,
  DecoderTraining,
  All,
  /// A training run given an optional input (a storage to checkpoint to).
  TrainingOnInput,
  /// A system of nodes (not a bare accelerator)
  OnNode,
  /// A system whose cost is known: a site (or a rental price)
  Priced,
  /// A system at a site (a cluster's `site`): absent without one, which
  /// the Macro level's heading says.
  OnSite,
  /// A scenario with a `simulate` block: filled in by the serving
  /// simulator after each evaluation.
  Simulated
};
/// The scorecard level a metric belongs to.
enum class Level : uint8_t { Feasibility, Performance, Macro, None };

struct MetricInfo {
  MetricId Id;
  const char *Name;
  const char *Unit; ///< as written in Metrics.def; "bool" for conditions
  Dimension Dim;
  bool IsBool;
  Wall W;
  Visibility Vis;
  Applies Where;
  Level Shown;
  const char *Doc;
};

struct PhaseInfo {
  PhaseId Id;
  const char *Prefix; ///< "request.prefill"
  MetricId StepTime;
  const char *Doc;
};

struct PhaseMetricInfo {
  PhaseMetricId Id;
  const char *Suffix; ///< "compute_time"
  const char *Unit;
  Dimension Dim;
  Wall W;
  bool Binds; ///< a time that competes for the phase's binding wall
  const char *Doc;
};

llvm::ArrayRef<MetricInfo> allMetrics();
const MetricInfo &metricInfo(MetricId M);
llvm::ArrayRef<PhaseInfo> allPhases();
const PhaseInfo &phaseInfo(PhaseId P);
llvm::ArrayRef<PhaseMetricInfo> allPhaseMetrics();
const PhaseMetricInfo &phaseMetricInfo(PhaseMetricId M);

inline constexpr unsigned NumMetrics = 0
#define METRIC(Id, ...) +1
#include "ir/Metrics.def"
    ;
inline constexpr unsigned NumPhases = 0
#define PHASE(Id, ...) +1
#include "ir/Metrics.def"
    ;
inline constexpr unsigned NumPhaseMetrics = 0
#define PHASE_METRIC(Id, ...) +1
#include "ir/Metrics.def"
    ;

/// "decode.compute_time".
std::string phaseMetricName(PhaseId P, PhaseMetricId M);
/// The metric called \p Name, if any.
std::optional<MetricId> findMetric(llvm::StringRef Name);
/// The phase whose prefix is \p Prefix ("decode"), if any.
std::optional<PhaseId> findPhase(llvm::StringRef Prefix);

} // namespace mlsc

#endif
