//===- Audit.h - Provenance of every registry value ---------------*- C++
//-*-===//
//
// `mlsc audit` lists every numeric value declared in the audited files with
// where it was written and the source record it cites, and flags values
// with no source, sources of kind `estimate` (or whose note says their
// figures were recalled, not checked), and sources not verified
// within a given number of years. The records are plain text and numbers;
// the driver renders them (text, CSV, JSON: docs/json-output.md).
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_AUDIT_H
#define MLSC_RUNTIME_AUDIT_H

#include "ir/IR.h"

#include <optional>
#include <string>
#include <vector>

namespace mlsc {

/// The `source` record a value cites; empty strings for absent fields.
struct AuditSource {
  std::string Name, Kind, Title, Url, Verified, Published;
};

struct AuditRecord {
  std::string Entity, EntityKind, Field;
  double Value = 0;
  std::string Unit;    ///< the dimension, e.g. "B/s"
  std::string Display; ///< e.g. "3.35 TB/s"
  std::string File;    ///< as given, or relative to the data folder
  unsigned Line = 0;
  std::optional<AuditSource> Source;
  std::string DerivedFrom; ///< the expression of a derived value
  bool Derived = false;    ///< computed from other values, no `from`
  bool Unsourced = false;  ///< a literal with no `from`
  bool Estimate = false;   ///< cites a source of kind `estimate`
  bool Stale = false;      ///< source never verified, or before the cut-off
  /// A price (a value in USD) whose source gives no `published` date, or
  /// one before the price cut-off: prices move faster than datasheets.
  bool StalePrice = false;

  /// " [no source] [derived] ..." in that order; "" when none applies.
  std::string flags() const;
};

struct AuditSummary {
  unsigned Values = 0, Unsourced = 0, Estimates = 0, Stale = 0, Derived = 0,
           StalePrices = 0;
};

/// Collects the records of the entities declared in buffer \p Buffer, in
/// line order. \p Cutoff is YYYY-MM-DD: sources verified before it are
/// stale; prices published before \p PriceCutoff (or undated) are too.
void collectAudit(const ir::Program &P, llvm::SourceMgr &SM, unsigned Buffer,
                  const std::string &File, const std::string &Cutoff,
                  const std::string &PriceCutoff,
                  std::vector<AuditRecord> &Out);

AuditSummary summarize(const std::vector<AuditRecord> &Records);

} // namespace mlsc

#endif
