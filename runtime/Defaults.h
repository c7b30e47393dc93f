//===- Defaults.h - Defaults and calibrated factors, in one table -*- C++
//-*-===//
//
// Every default the lowering falls back on when an entity does not give a
// field, and every calibrated factor's plausible range, with the evidence
// for both (Defaults.def). Lowering takes a default's value and note from
// here, sensitivity analysis its range, and docs/walls.md its evidence.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_DEFAULTS_H
#define MLSC_RUNTIME_DEFAULTS_H

#include "ir/Walls.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <string>

namespace mlsc {

enum class DefaultId : uint8_t {
#define DEFAULT(Id, ...) Id,
#include "runtime/Defaults.def"
};

struct DefaultInfo {
  DefaultId Id;
  const char *Kind;  ///< "workload"
  const char *Field; ///< "kernels.gemm"
  double Value;      ///< in SI base units; NaN when there is no default
  const char *Unit;  ///< as written in the table
  double Written;    ///< the value in Unit
  double Low, High;  ///< the plausible range in SI units; NaN when none
  Wall W;
  bool Calibrated;
  const char *NoteTemplate;
  const char *Evidence;

  bool hasValue() const { return !std::isnan(Value); }
  bool hasRange() const { return !std::isnan(Low); }
  bool inRange() const { return hasValue() && Value >= Low && Value <= High; }
  /// SI units per Unit (1e9 for "GB").
  double scale() const;
  /// What explain says of the default leaf.
  std::string note() const;
};

llvm::ArrayRef<DefaultInfo> allDefaults();
const DefaultInfo &defaultInfo(DefaultId Id);
/// The row of \p Kind's field \p Field, if any.
const DefaultInfo *findDefault(llvm::StringRef Kind, llvm::StringRef Field);
/// Whether a field (of any kind) is a calibrated factor.
bool isCalibratedField(llvm::StringRef Field);

} // namespace mlsc

#endif
