//===- Audit.h - Provenance of every registry value ---------------*- C++
//-*-===//
//
// `mlsc audit` lists every numeric value declared in the audited files with
// where it was written and the source record it cites, and flags values
// with no source, sources of kind `estimate`, and sources not verified
// within a given number of years. JSON schema: docs/json-output.md.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_AUDIT_H
#define MLSC_RUNTIME_AUDIT_H

#include "ir/IR.h"

#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mlsc {

struct AuditRecord {
  const ir::Entity *Entity = nullptr;
  const ir::Field *Field = nullptr;
  std::string File; ///< as given, or relative to the data folder
  unsigned Line = 0;
  bool Derived = false;   ///< computed from other values, no `from`
  bool Unsourced = false; ///< a literal with no `from`
  bool Estimate = false;  ///< cites a source of kind `estimate`
  bool Stale = false;     ///< source never verified, or before the cut-off
};

struct AuditSummary {
  unsigned Values = 0, Unsourced = 0, Estimates = 0, Stale = 0, Derived = 0;
};

/// Collects the records of the entities declared in buffer \p Buffer.
/// \p Cutoff is YYYY-MM-DD: sources verified before it are stale.
void collectAudit(const ir::Program &P, llvm::SourceMgr &SM, unsigned Buffer,
                  const std::string &File, const std::string &Cutoff,
                  std::vector<AuditRecord> &Out);

AuditSummary summarize(const std::vector<AuditRecord> &Records);

void printAuditText(const std::vector<AuditRecord> &Records,
                    const std::string &Cutoff, llvm::raw_ostream &OS);
void printAuditCSV(const std::vector<AuditRecord> &Records,
                   llvm::raw_ostream &OS);
nlohmann::ordered_json auditJSON(const std::vector<AuditRecord> &Records);

} // namespace mlsc

#endif
