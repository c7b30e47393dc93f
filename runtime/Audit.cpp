//===- Audit.cpp - Provenance of every registry value ---------------------===//

#include "runtime/Audit.h"
#include "runtime/Format.h"

#include <fmt/format.h>

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

std::string flags(const AuditRecord &R) {
  std::string S;
  if (R.Unsourced)
    S += " [no source]";
  if (R.Derived)
    S += " [derived]";
  if (R.Estimate)
    S += " [estimate]";
  if (R.Stale)
    S += " [not verified recently]";
  return S;
}

std::string display(const AuditRecord &R) {
  const ir::Value &V = *R.Field->Folded;
  return formatQuantity(V.Number, V.Dim);
}

/// RFC 4180: quote fields that hold commas, quotes or newlines.
std::string csv(const std::string &S) {
  if (S.find_first_of(",\"\n") == std::string::npos)
    return S;
  std::string Q = "\"";
  for (char C : S)
    Q += C == '"' ? std::string("\"\"") : std::string(1, C);
  return Q + "\"";
}

} // namespace

void collectAudit(const ir::Program &P, llvm::SourceMgr &SM, unsigned Buffer,
                  const std::string &File, const std::string &Cutoff,
                  std::vector<AuditRecord> &Out) {
  for (const auto &E : P.Entities) {
    if (E->Kind == "source" ||
        SM.FindBufferContainingLoc(E->NameRange.Start) != Buffer)
      continue;
    for (const ir::Field &F : E->Fields) {
      if (F.InheritedFrom || !F.Value || !F.Folded ||
          F.Folded->Kind != ir::TypeKind::Quantity)
        continue;
      AuditRecord R;
      R.Entity = E.get();
      R.Field = &F;
      R.File = File;
      R.Line = SM.getLineAndColumn(F.Range.Start, Buffer).first;
      bool Literal = F.Value->Kind == ir::ExprKind::Number;
      R.Derived = !F.Source && !Literal;
      R.Unsourced = !F.Source && Literal;
      R.Estimate = text(F.Source, "kind") == "estimate";
      std::string Verified = text(F.Source, "verified");
      R.Stale = F.Source && (Verified.empty() || Verified < Cutoff);
      Out.push_back(R);
    }
  }
}

AuditSummary summarize(const std::vector<AuditRecord> &Records) {
  AuditSummary S;
  for (const AuditRecord &R : Records) {
    ++S.Values;
    S.Unsourced += R.Unsourced;
    S.Estimates += R.Estimate;
    S.Stale += R.Stale;
    S.Derived += R.Derived;
  }
  return S;
}

void printAuditText(const std::vector<AuditRecord> &Records,
                    const std::string &Cutoff, llvm::raw_ostream &OS) {
  for (const AuditRecord &R : Records) {
    OS << R.File << ":" << R.Line << "  " << R.Entity->Kind << " "
       << R.Entity->Name << "." << R.Field->Path << " = " << display(R);
    if (R.Field->Source)
      OS << "  from " << R.Field->Source->Name << " ("
         << text(R.Field->Source, "kind") << ", verified "
         << (text(R.Field->Source, "verified").empty()
                 ? std::string("never")
                 : text(R.Field->Source, "verified"))
         << ")";
    else if (R.Derived)
      OS << "  = " << ir::exprToString(*R.Field->Value);
    OS << flags(R) << "\n";
  }
  AuditSummary S = summarize(Records);
  OS << S.Values << " values: " << S.Unsourced << " without a source, "
     << S.Derived << " derived, " << S.Estimates << " estimates, " << S.Stale
     << " with a source not verified since " << Cutoff << "\n";
}

void printAuditCSV(const std::vector<AuditRecord> &Records,
                   llvm::raw_ostream &OS) {
  OS << "entity,entity_kind,field,value,unit,display,file,line,source,"
        "source_kind,source_title,source_url,verified,flags\n";
  for (const AuditRecord &R : Records) {
    const ir::Entity *Src = R.Field->Source;
    std::string Flags = flags(R);
    if (!Flags.empty())
      Flags = Flags.substr(1);
    OS << csv(R.Entity->Name) << "," << R.Entity->Kind << ","
       << csv(R.Field->Path) << ","
       << fmt::format("{:.17g}", R.Field->Folded->Number) << ","
       << csv(R.Field->Folded->Dim.str()) << "," << csv(display(R)) << ","
       << csv(R.File) << "," << R.Line << "," << (Src ? Src->Name : "") << ","
       << csv(text(Src, "kind")) << "," << csv(text(Src, "title")) << ","
       << csv(text(Src, "url")) << "," << text(Src, "verified") << ","
       << csv(Flags) << "\n";
  }
}

nlohmann::ordered_json auditJSON(const std::vector<AuditRecord> &Records) {
  using json = nlohmann::ordered_json;
  json A = json::array();
  for (const AuditRecord &R : Records) {
    json J;
    J["entity"] = R.Entity->Name;
    J["entity_kind"] = R.Entity->Kind;
    J["field"] = R.Field->Path;
    J["value"] = R.Field->Folded->Number;
    J["unit"] = R.Field->Folded->Dim.str();
    J["display"] = display(R);
    J["file"] = R.File;
    J["line"] = R.Line;
    if (const ir::Entity *Src = R.Field->Source) {
      json S;
      S["name"] = Src->Name;
      S["kind"] = text(Src, "kind");
      S["title"] = text(Src, "title");
      S["url"] =
          text(Src, "url").empty() ? json(nullptr) : json(text(Src, "url"));
      S["verified"] = text(Src, "verified").empty()
                          ? json(nullptr)
                          : json(text(Src, "verified"));
      J["source"] = S;
    } else {
      J["source"] = nullptr;
    }
    if (R.Derived)
      J["derived_from"] = ir::exprToString(*R.Field->Value);
    J["estimate"] = R.Estimate;
    J["stale"] = R.Stale;
    A.push_back(J);
  }
  return A;
}

} // namespace mlsc
