//===- Audit.cpp - Provenance of every registry value ---------------------===//

#include "runtime/Audit.h"
#include "runtime/Format.h"
#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <algorithm>

namespace mlsc {

namespace {

std::string text(const ir::Entity *E, llvm::StringRef Field) {
  if (!E)
    return "";
  const ir::Field *F = E->field(Field);
  if (!F || !F->Folded)
    return "";
  if (F->Folded->Kind == ir::TypeKind::Date)
    return fmt::format("{:04}-{:02}-{:02}", F->Folded->Year, F->Folded->Month,
                       F->Folded->Day);
  return F->Folded->Text;
}

} // namespace

std::string AuditRecord::flags() const {
  std::string S;
  if (Unsourced)
    S += " [no source]";
  if (Derived)
    S += " [derived]";
  if (Estimate)
    S += " [estimate]";
  if (Stale)
    S += " [not verified recently]";
  if (StalePrice)
    S += Source && !Source->Published.empty() ? " [old price]"
                                              : " [undated price]";
  return S;
}

void collectAudit(const ir::Program &P, llvm::SourceMgr &SM, unsigned Buffer,
                  const std::string &File, const std::string &Cutoff,
                  const std::string &PriceCutoff,
                  std::vector<AuditRecord> &Out) {
  size_t First = Out.size();
  for (const auto &E : P.Entities) {
    if (E->Kind == "source" ||
        SM.FindBufferContainingLoc(E->NameRange.Start) != Buffer)
      continue;
    for (const ir::Field &F : E->Fields) {
      if (F.InheritedFrom || !F.Value || !F.Folded ||
          F.Folded->Kind != ir::TypeKind::Quantity)
        continue;
      AuditRecord R;
      R.Entity = E->Name;
      R.EntityKind = E->Kind;
      R.Field = F.Path;
      R.Value = F.Folded->Number;
      R.Unit = F.Folded->Dim.str();
      R.Display = formatQuantity(F.Folded->Number, F.Folded->Dim);
      R.File = File;
      R.Line = SM.getLineAndColumn(F.Range.Start, Buffer).first;
      bool Literal = F.Value->Kind == ir::ExprKind::Number;
      R.Derived = !F.Source && !Literal;
      R.Unsourced = !F.Source && Literal;
      if (R.Derived)
        R.DerivedFrom = ir::exprToString(*F.Value);
      if (const ir::Entity *Src = F.Source) {
        R.Source = AuditSource{
            Src->Name,        text(Src, "kind"),     text(Src, "title"),
            text(Src, "url"), text(Src, "verified"), text(Src, "published")};
        // A source whose own note says its figures were recalled, not
        // checked, is an estimate whatever its kind says.
        std::string Note = llvm::StringRef(text(Src, "note")).lower();
        bool Recalled = Note.find("recalled") != std::string::npos ||
                        Note.find("not re-read") != std::string::npos ||
                        Note.find("not checked") != std::string::npos;
        R.Estimate = R.Source->Kind == "estimate" || Recalled;
        R.Stale = R.Source->Verified.empty() || R.Source->Verified < Cutoff;
      }
      if (llvm::StringRef(R.Unit).startswith("USD"))
        R.StalePrice = !R.Source || R.Source->Published.empty() ||
                       R.Source->Published < PriceCutoff;
      Out.push_back(std::move(R));
    }
  }
  // File order reads best: by line within each file.
  std::stable_sort(Out.begin() + First, Out.end(),
                   [](const AuditRecord &A, const AuditRecord &B) {
                     return A.Line < B.Line;
                   });
}

AuditSummary summarize(const std::vector<AuditRecord> &Records) {
  AuditSummary S;
  for (const AuditRecord &R : Records) {
    ++S.Values;
    S.Unsourced += R.Unsourced;
    S.Estimates += R.Estimate;
    S.Stale += R.Stale;
    S.Derived += R.Derived;
    S.StalePrices += R.StalePrice;
  }
  return S;
}

} // namespace mlsc
