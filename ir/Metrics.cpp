//===- Metrics.cpp - The graph contract: metrics and phases ---------------===//

#include "ir/Metrics.h"
#include "ir/Units.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

namespace mlsc {

namespace {

/// The dimension of a unit written in Metrics.def; a unit the table cannot
/// parse is a bug in the table.
Dimension dimensionOf(const char *Spelling) {
  if (llvm::StringRef(Spelling) == "bool" || llvm::StringRef(Spelling) == "1")
    return Dimension();
  UnitParseError Err;
  std::optional<Unit> U = parseUnit(Spelling, Err);
  if (!U)
    llvm::report_fatal_error(llvm::Twine("Metrics.def: bad unit `") + Spelling +
                             "`");
  return U->Dim;
}

const std::vector<MetricInfo> &metricTable() {
  static const std::vector<MetricInfo> Table = {
#define METRIC(Id, Name, Unit, W, Vis, Where, Shown, Doc)                      \
  {MetricId::Id,                                                               \
   Name,                                                                       \
   Unit,                                                                       \
   dimensionOf(Unit),                                                          \
   llvm::StringRef(Unit) == "bool",                                            \
   Wall::W,                                                                    \
   Visibility::Vis,                                                            \
   Applies::Where,                                                             \
   Level::Shown,                                                               \
   Doc},
#include "ir/Metrics.def"
  };
  return Table;
}

const PhaseInfo PhaseTable[] = {
#define PHASE(Id, Prefix, StepTime, Doc)                                       \
  {PhaseId::Id, Prefix, MetricId::StepTime, Doc},
#include "ir/Metrics.def"
};

const std::vector<PhaseMetricInfo> &phaseMetricTable() {
  static const std::vector<PhaseMetricInfo> Table = {
#define PHASE_METRIC(Id, Suffix, Unit, W, Binds, Doc)                          \
  {PhaseMetricId::Id, Suffix, Unit, dimensionOf(Unit), Wall::W, Binds, Doc},
#include "ir/Metrics.def"
  };
  return Table;
}

} // namespace

llvm::ArrayRef<MetricInfo> allMetrics() { return metricTable(); }
const MetricInfo &metricInfo(MetricId M) {
  return metricTable()[static_cast<unsigned>(M)];
}
llvm::ArrayRef<PhaseInfo> allPhases() { return PhaseTable; }
const PhaseInfo &phaseInfo(PhaseId P) {
  return PhaseTable[static_cast<unsigned>(P)];
}
llvm::ArrayRef<PhaseMetricInfo> allPhaseMetrics() { return phaseMetricTable(); }
const PhaseMetricInfo &phaseMetricInfo(PhaseMetricId M) {
  return phaseMetricTable()[static_cast<unsigned>(M)];
}

std::string phaseMetricName(PhaseId P, PhaseMetricId M) {
  return std::string(phaseInfo(P).Prefix) + "." + phaseMetricInfo(M).Suffix;
}

std::optional<MetricId> findMetric(llvm::StringRef Name) {
  for (const MetricInfo &M : allMetrics())
    if (Name == M.Name)
      return M.Id;
  return std::nullopt;
}

std::optional<PhaseId> findPhase(llvm::StringRef Prefix) {
  for (const PhaseInfo &P : allPhases())
    if (Prefix == P.Prefix)
      return P.Id;
  return std::nullopt;
}

} // namespace mlsc
